import { afterEach, describe, expect, it } from 'vitest';
import {
  NotificationCard,
  NotificationPaymentMethod,
  NotificationShopper,
  PaymentMethodNotification,
} from 'nestjs-payouts';
import { AuditTrail, CardEvents, deferred, ThrowingRemovals } from './notification-handlers.fixture.js';
import {
  ADAPTERS,
  cardAdded,
  type HttpReply,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const PATH = 'payouts/notifications';
const ACK = '{"ResultCode":0}';

describe.each(ADAPTERS)('notification replies on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(
    options: { rawBody?: boolean; bodyLimitBytes?: number; handlers?: 'both' | 'cards' | 'none' | 'throwing' } = {},
  ) {
    logger = new RecordingLogger();
    const handlers = options.handlers ?? 'cards';
    const providers = { none: [], cards: [CardEvents], both: [CardEvents, AuditTrail], throwing: [ThrowingRemovals] };
    running = await startNotificationsApp({
      adapter,
      logger,
      rawBody: options.rawBody,
      notifications: {
        verification: 'none',
        ...(options.bodyLimitBytes && { bodyLimitBytes: options.bodyLimitBytes }),
      },
      providers: providers[handlers],
    });
    return running;
  }

  const cardEvents = () => running!.app.get(CardEvents);
  const send = (body: unknown, options?: Parameters<typeof post>[2]) => post(running!.url(PATH), body, options);

  function expectAck(reply: HttpReply): void {
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.body).toBe(ACK);
  }

  it('acknowledges with exactly 200, application/json; charset=utf-8 and {"ResultCode":0}', async () => {
    await start();
    const reply = await send(cardAdded());
    expectAck(reply);
    expect(reply.headers['content-length']).toBe(String(ACK.length));
  });

  it('gives the handler class instances with every field, unknown ones included, and the context', async () => {
    await start({ rawBody: true });
    const body = cardAdded({ extra: { nested: [1, 2] } });
    (body.shopper as Record<string, unknown>).loyalty = 'gold';
    (body.paymentMethod as { card: Record<string, unknown> }).card.brand = 'visa';
    const raw = JSON.stringify(body);
    expectAck(await send(raw, { headers: { 'x-request-id': 'abc' } }));

    const [received] = cardEvents().received;
    const { notification, context } = received!;
    expect(notification).toBeInstanceOf(PaymentMethodNotification);
    expect(notification.shopper).toBeInstanceOf(NotificationShopper);
    expect(notification.paymentMethod).toBeInstanceOf(NotificationPaymentMethod);
    expect(notification.paymentMethod.card).toBeInstanceOf(NotificationCard);
    expect(JSON.parse(JSON.stringify(notification))).toEqual(body);
    expect(notification.extra).toEqual({ nested: [1, 2] });
    expect(notification.shopper.loyalty).toBe('gold');
    expect(notification.paymentMethod.card?.brand).toBe('visa');

    expect(context.rawBody?.toString('utf8')).toBe(raw);
    expect(context.headers['x-request-id']).toBe('abc');
    expect(context.receivedAt).toBeInstanceOf(Date);
    expect(context.ip).toBe('127.0.0.1');
    const shopper = body.shopper as { id: string };
    const method = body.paymentMethod as { id: string };
    expect(context.dedupeKey).toBe(`PAYMENT_METHOD_ADDED:${shopper.id}:${method.id}:2025-03-14T09%3A26%3A53.589Z`);
  });

  it('leaves rawBody undefined when the app was created without rawBody: true', async () => {
    await start();
    expectAck(await send(cardAdded()));
    expect(cardEvents().received[0]!.context.rawBody).toBeUndefined();
  });

  it('runs every matching handler, in any class, and the catch-all on unknown event types', async () => {
    await start({ handlers: 'both' });
    expectAck(await send(cardAdded()));
    expectAck(await send(cardAdded({ eventType: 'PAYMENT_METHOD_REMOVED' })));
    expectAck(await send(cardAdded({ eventType: 'PAYMENT_METHOD_EXPIRED' })));
    expect(cardEvents().received.map((entry) => entry.handler)).toEqual(['added', 'removed']);
    expect(running!.app.get(AuditTrail).received.map((entry) => entry.notification.eventType)).toEqual([
      'PAYMENT_METHOD_ADDED',
      'PAYMENT_METHOD_REMOVED',
      'PAYMENT_METHOD_EXPIRED',
    ]);
  });

  it('acknowledges and logs a notification no handler matches', async () => {
    await start();
    const body = cardAdded({ eventType: 'PAYMENT_METHOD_EXPIRED' });
    expectAck(await send(body));
    expect(cardEvents().received).toEqual([]);
    expect(logger.messages('warn')).toContainEqual(
      expect.stringContaining(`No handler for PAYMENT_METHOD_EXPIRED notification PAYMENT_METHOD_EXPIRED:`),
    );
  });

  it('answers 500 when a handler fails, logs it with the dedupe key, and handles the re-send', async () => {
    await start();
    const body = cardAdded();
    cardEvents().behaviour = () => {
      throw new Error('database down');
    };
    const failed = await send(body);
    expect(failed.status).toBe(500);
    expect(failed.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(failed.body)).toEqual({ statusCode: 500, message: 'The notification could not be handled' });
    expect(failed.body).not.toContain('database down');
    const key = cardEvents().received[0]!.context.dedupeKey;
    expect(logger.messages('error')).toContainEqual(
      expect.stringContaining(`CardEvents.added failed on notification ${key}`),
    );

    cardEvents().behaviour = () => undefined;
    expectAck(await send(body));
    expect(cardEvents().received).toHaveLength(2);
  });

  it('answers 500 when a synchronous handler throws, and runs it again on the re-send', async () => {
    await start({ handlers: 'throwing' });
    const body = cardAdded({ eventType: 'PAYMENT_METHOD_REMOVED' });
    for (const attempt of [1, 2]) {
      const reply = await send(body);
      expect(reply.status).toBe(500);
      expect(running!.app.get(ThrowingRemovals).calls).toBe(attempt);
    }
    expect(logger.messages('error')).toContainEqual(
      expect.stringContaining('ThrowingRemovals.removed failed on notification'),
    );
  });

  it('acknowledges a re-send of a handled notification without running the handlers again', async () => {
    await start();
    const body = cardAdded();
    expectAck(await send(body));
    expectAck(await send(JSON.stringify(body, null, 2)));
    expect(cardEvents().received).toHaveLength(1);
  });

  it('runs the handlers once for 20 concurrent deliveries; the others get 409 and no ack', async () => {
    await start();
    const gate = deferred();
    cardEvents().behaviour = () => gate.promise;
    const body = cardAdded();
    const early: HttpReply[] = [];
    const othersAnswered = deferred();
    const replies = Array.from({ length: 20 }, () =>
      send(body).then((reply) => {
        early.push(reply);
        if (early.length === 19) othersAnswered.resolve();
        return reply;
      }),
    );
    await othersAnswered.promise;
    expect(early.map((reply) => reply.status)).toEqual(Array(19).fill(409));
    expect(early.every((reply) => reply.body !== ACK)).toBe(true);
    gate.resolve();
    const all = await Promise.all(replies);
    expect(all.filter((reply) => reply.status === 200)).toHaveLength(1);
    expect(cardEvents().received).toHaveLength(1);
  });

  it('waits for the handlers to finish before acknowledging', async () => {
    await start();
    const gate = deferred();
    const handlerStarted = deferred();
    let finished = false;
    cardEvents().behaviour = async () => {
      handlerStarted.resolve();
      await gate.promise;
      finished = true;
    };
    const reply = send(cardAdded());
    await handlerStarted.promise;
    expect(finished).toBe(false);
    gate.resolve();
    expectAck(await reply);
    expect(finished).toBe(true);
  });

  describe('rejects bad input with a 4xx, never an ack, and runs no handler', () => {
    afterEach(() => {
      expect(cardEvents().received).toEqual([]);
    });

    it('400 JSON on malformed JSON', async () => {
      await start();
      const reply = await send('{"eventType": "PAYMENT_METHOD_ADDED",');
      expect(reply.status).toBe(400);
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(reply.body)).toMatchObject({ statusCode: 400 });
    });

    it.each([['[]'], ['[{"eventType":"PAYMENT_METHOD_ADDED"}]'], ['"text"'], ['42'], ['null']])(
      '400 on a body that is not a JSON object: %s',
      async (raw) => {
        await start();
        const reply = await send(raw);
        expect(reply.status).toBe(400);
        expect(reply.headers['content-type']).toMatch(/^application\/json/);
        expect(JSON.parse(reply.body)).toMatchObject({ statusCode: 400 });
      },
    );

    it('400 listing each failing field path', async () => {
      await start();
      const reply = await send({
        eventType: 'PAYMENT_METHOD_ADDED',
        timestamp: 'yesterday',
        shopper: { id: '', email: 'not-an-email', partner_shopper_id: 7 },
        paymentMethod: {
          id: 'pmt_1',
          type: 'card',
          card: { lastFour: '42', expirationMonth: '13', expirationYear: 31 },
        },
      });
      expect(reply.status).toBe(400);
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      const { statusCode, errors } = JSON.parse(reply.body) as { statusCode: number; errors: { field: string }[] };
      expect(statusCode).toBe(400);
      expect(errors.map((error) => error.field)).toEqual([
        'timestamp',
        'shopper.id',
        'shopper.partner_shopper_id',
        'shopper.email',
        'paymentMethod.card.lastFour',
        'paymentMethod.card.expirationMonth',
        'paymentMethod.card.expirationYear',
      ]);
    });

    it('400 when required objects are missing', async () => {
      await start();
      const reply = await send({ eventType: 'PAYMENT_METHOD_ADDED', timestamp: '2025-03-14T09:26:53.589Z' });
      expect(reply.status).toBe(400);
      const { errors } = JSON.parse(reply.body) as { errors: { field: string }[] };
      expect(errors.map((error) => error.field)).toEqual(['shopper', 'paymentMethod']);
    });

    it('400 when an added card has no card details', async () => {
      await start();
      const reply = await send(cardAdded({ paymentMethod: { id: 'pmt_x', type: 'card' } }));
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.body).errors).toEqual([{ field: 'paymentMethod.card', message: expect.any(String) }]);
    });

    it.each([['text/plain'], ['application/x-www-form-urlencoded']])('415 on Content-Type %s', async (contentType) => {
      await start();
      const reply = await send(JSON.stringify(cardAdded()), { headers: { 'content-type': contentType } });
      expect(reply.status).toBe(415);
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
    });

    it('413 on a body over the limit', async () => {
      await start({ bodyLimitBytes: 1024 });
      const reply = await send(cardAdded({ padding: 'x'.repeat(2000) }));
      expect(reply.status).toBe(413);
      expect(JSON.parse(reply.body)).toEqual({ statusCode: 413, message: 'request entity too large' });
    });

    it('413 on a chunked body over the limit, measured from the raw body', async () => {
      await start({ bodyLimitBytes: 1024, rawBody: true });
      const reply = await send(cardAdded({ padding: 'x'.repeat(2000) }), { chunked: true });
      expect(reply.status).toBe(413);
    });

    it.runIf(adapter === 'fastify')(
      '413 on a chunked body over the limit without rawBody, counted as it arrives',
      async () => {
        await start({ bodyLimitBytes: 1024 });
        const reply = await send(cardAdded({ padding: 'x'.repeat(2000) }), { chunked: true });
        expect(reply.status).toBe(413);
      },
    );

    it('413 by default above 64 KiB', async () => {
      await start();
      const reply = await send(cardAdded({ padding: 'x'.repeat(70_000) }));
      expect(reply.status).toBe(413);
    });
  });

  it('acknowledges a chunked body when raw bodies are not kept (Express: within its parser limit)', async () => {
    await start({ bodyLimitBytes: 4096 });
    expectAck(await send(cardAdded(), { chunked: true }));
    expect(cardEvents().received).toHaveLength(1);
  });

  it('accepts a body just under the limit and a chunked one when raw bodies are kept', async () => {
    await start({ bodyLimitBytes: 4096, rawBody: true });
    expectAck(await send(cardAdded({ padding: 'x'.repeat(2000) })));
    expectAck(await send(cardAdded(), { chunked: true }));
    expect(cardEvents().received).toHaveLength(2);
  });
});
