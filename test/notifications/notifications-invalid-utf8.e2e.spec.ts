import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const SECRET = 'utf8-secret-5e1d0c9b7a';
const PATH = 'payouts/notifications';
const ACK = '{"ResultCode":0}';
/** Bytes no UTF-8 decoder accepts: a stray continuation byte, a lead byte without its continuation, 0xFF. */
const INVALID = Buffer.from([0x80, 0xc3, 0x28, 0xff]);

/** A valid notification as bytes, with each marker (the contents of a JSON string) replaced by `bytes`. */
function withBytes(notification: Record<string, unknown>, bytes: Buffer, ...markers: string[]): Buffer {
  let body = Buffer.from(JSON.stringify(notification));
  for (const marker of markers) {
    const at = body.indexOf(marker);
    body = Buffer.concat([body.subarray(0, at), bytes, body.subarray(at + marker.length)]);
  }
  return body;
}

const invalidField = (...fields: string[]) => ({
  statusCode: 400,
  message: 'Invalid notification',
  errors: fields.map((field) => ({ field, message: 'must be valid UTF-8' })),
});

/*
 * Bytes that are not UTF-8 would reach the handler as U+FFFD: an id the sender never sent. Where the route sees the
 * bytes (Fastify always, Express when the app keeps raw bodies) it refuses them with 400 naming the field, after
 * verification; where it cannot (Express without raw bodies), docs/notifications.md says so.
 */
describe.each(ADAPTERS)('bytes that are not UTF-8 on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(rawBody: boolean): Promise<NotificationsApp> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      rawBody,
      notifications: { verification: { secret: { value: SECRET } } },
      providers: [CardEvents],
    });
    return running;
  }

  const handled = () => running!.app.get(CardEvents).received;
  const url = (token = SECRET) => running!.url(`${PATH}?token=${token}`);

  it.each([false, true])('with rawBody %s: 400 naming the field, or U+FFFD where the route cannot see', async (raw) => {
    await start(raw);
    const body = withBytes(cardAdded({ paymentMethod: { id: 'MARK', type: 'paypal' } }), INVALID, 'MARK');
    for (const chunked of [false, true]) {
      const reply = await post(url(), body, { chunked });
      if (adapter === 'express' && !raw) {
        expect(reply.body).toBe(ACK);
      } else {
        expect(reply.status).toBe(400);
        expect(JSON.parse(reply.body)).toEqual(invalidField('paymentMethod.id'));
      }
    }
    if (adapter === 'express' && !raw) {
      expect(handled()[0]!.notification.paymentMethod.id).toBe('\ufffd\ufffd(\ufffd');
    } else {
      expect(handled()).toEqual([]);
      expect(logger.messages('warn')).toContainEqual(
        expect.stringMatching(/^Notification refused with 400 .*: bytes that are not UTF-8 in paymentMethod\.id$/),
      );
    }
  });

  it.runIf(adapter === 'fastify')('names unknown fields and keys too, at any depth', async () => {
    await start(false);
    const notification = cardAdded({ extra: { list: ['ok', 'MARK1'] }, MARK2: 1 });
    const reply = await post(url(), withBytes(notification, INVALID, 'MARK1', 'MARK2'));
    expect(JSON.parse(reply.body)).toEqual(invalidField('extra.list[1]', '\ufffd\ufffd(\ufffd'));
    expect(handled()).toEqual([]);
  });

  it('answers 401 first to an unverified sender, whatever its bytes', async () => {
    await start(true);
    const reply = await post(url('wrong'), withBytes(cardAdded(), INVALID, 'shp_'));
    expect(reply.status).toBe(401);
  });

  it('acknowledges valid UTF-8 cut between two chunks, and hands the exact text over', async () => {
    await start(false);
    // Characters of 2, 3 and 4 bytes: wherever the middle of the body falls, it cuts one of them.
    const id = `shp_${'é€😀'.repeat(40)}`;
    const reply = await post(url(), cardAdded({ shopper: { id } }), { chunked: true });
    expect(reply.body).toBe(ACK);
    expect(handled()[0]!.notification.shopper.id).toBe(id);
  });

  it('refuses a character cut short', async () => {
    await start(true);
    const cut = Buffer.from('😀').subarray(0, 3);
    const reply = await post(url(), withBytes(cardAdded(), cut, 'shp_'), { chunked: true });
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body)).toEqual(invalidField('shopper.id'));
  });

  it.each([false, true])(
    'with rawBody %s: refuses bytes that are not UTF-8 in a later chunk of a chunked body, naming the field',
    async (raw) => {
      await start(raw);
      const body = withBytes(cardAdded({ paymentMethod: { id: 'MARK', type: 'paypal' } }), INVALID, 'MARK');
      const at = body.indexOf(INVALID);
      // Three chunks, written apart so that the server reads them one by one; the last two hold the invalid bytes.
      const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          url(),
          { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
          },
        );
        req.on('error', reject);
        req.write(body.subarray(0, at + 1));
        setTimeout(() => {
          req.write(body.subarray(at + 1, at + 3));
          setTimeout(() => req.end(body.subarray(at + 3)), 20);
        }, 20);
      });
      if (adapter === 'express' && !raw) {
        expect(reply.body).toBe(ACK);
        expect(handled()[0]!.notification.paymentMethod.id).toBe('\ufffd\ufffd(\ufffd');
      } else {
        expect(reply.status).toBe(400);
        expect(JSON.parse(reply.body)).toEqual(invalidField('paymentMethod.id'));
        expect(handled()).toEqual([]);
      }
    },
  );

  it('acknowledges U+FFFD sent as valid UTF-8 and as an escape, and hands it over', async () => {
    await start(false);
    for (const chunked of [false, true]) {
      // U+FFFD as its three bytes, then as a JSON escape: both are what the sender meant, and valid UTF-8.
      const marked = cardAdded({ paymentMethod: { id: 'MARK', type: 'paypal' } });
      const body = withBytes(marked, Buffer.from('pmt_\ufffd_\\ufffd'), 'MARK');
      const reply = await post(url(), body, { chunked });
      expect(reply.status).toBe(200);
      expect(reply.body).toBe(ACK);
    }
    expect(handled().map(({ notification }) => notification.paymentMethod.id)).toEqual([
      'pmt_\ufffd_\ufffd',
      'pmt_\ufffd_\ufffd',
    ]);
  });
});
