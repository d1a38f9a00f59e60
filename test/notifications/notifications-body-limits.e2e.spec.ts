import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationsOptions } from 'nestjs-payouts';
import { CardEvents } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const SECRET = 'limits-secret-0123456789abcdef';
const PATH = 'payouts/notifications';
const TOO_LARGE = { statusCode: 413, message: 'request entity too large' };

/** A valid notification whose unknown field `nested` holds `depth` nested arrays: small, but deep. */
function deeplyNested(depth: number): string {
  return JSON.stringify(cardAdded()).replace('{', `{"nested":${'['.repeat(depth)}${']'.repeat(depth)},`);
}

/** A valid notification padded with `spaces` spaces of whitespace, which no re-serialisation would count. */
function paddedWithSpaces(spaces: number): string {
  return JSON.stringify(cardAdded()).replace('{', `{${' '.repeat(spaces)}`);
}

/*
 * The size limit counts the bytes received, never a re-serialisation of the parsed body, and nothing walks the body
 * before verification: the shape of a body can neither crash the route nor slip past the limit.
 */
describe.each(ADAPTERS)('body size and shape on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(notifications: Partial<NotificationsOptions>, rawBody = false): Promise<NotificationsApp> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      rawBody,
      notifications: { verification: { secret: { value: SECRET } }, ...notifications },
      providers: [CardEvents],
    });
    return running;
  }

  const handled = () => running!.app.get(CardEvents).received;
  const url = (token: string) => running!.url(`${PATH}?token=${token}`);

  it('answers 401, never 500, to a wrong secret with a chunked body nested 40,000 levels deep', async () => {
    await start({});
    const reply = await post(url('wrong'), deeplyNested(40_000), { chunked: true });
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.body)).toEqual({ statusCode: 401, message: 'Unauthorized' });
    expect(logger.messages('error')).toEqual([]);
  });

  it('acknowledges that deep body from a verified sender when it fits the limit, and hands it over whole', async () => {
    await start({ bodyLimitBytes: 100_000 }, true);
    const body = deeplyNested(40_000);
    const reply = await post(url(SECRET), body, { chunked: true });
    expect(reply.status).toBe(200);
    expect(handled()).toHaveLength(1);
    expect(handled()[0]!.context.rawBody!.length).toBe(Buffer.byteLength(body));
  });

  it('counts the whitespace of a chunked body: 413 past the limit when raw bodies are kept', async () => {
    await start({ bodyLimitBytes: 4096 }, true);
    const reply = await post(url(SECRET), paddedWithSpaces(5000), { chunked: true });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toEqual(TOO_LARGE);
    expect(handled()).toEqual([]);
  });

  it('acknowledges a chunked body from a verified sender when raw bodies are not kept, and hands it over', async () => {
    await start({ bodyLimitBytes: 4096 });
    const body = cardAdded();
    const reply = await post(url(SECRET), body, { chunked: true });
    expect(reply.status).toBe(200);
    expect(reply.body).toBe('{"ResultCode":0}');
    expect(handled()).toHaveLength(1);
    expect(handled()[0]!.notification.shopper.id).toBe((body.shopper as { id: string }).id);
    expect(handled()[0]!.context.rawBody).toBeUndefined();
  });

  it('counts a chunked body as it arrives without raw bodies too (413 past the limit); the parser limit still applies', async () => {
    await start({ bodyLimitBytes: 4096 });
    const reply = await post(url(SECRET), paddedWithSpaces(5000), { chunked: true });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toEqual(TOO_LARGE);
    expect(handled()).toEqual([]);
    expect(logger.messages('warn')).toContainEqual(
      expect.stringMatching(
        /^Notification refused with 413 .*: the body has 5\d{3} bytes, over bodyLimitBytes \(4096\)$/,
      ),
    );
    const overParserLimit = await post(url(SECRET), paddedWithSpaces(150_000), { chunked: true });
    expect(overParserLimit.status).toBe(413);
    expect(handled()).toEqual([]);
  });

  it('still answers 401 first to an unverified chunked body, within the limit or over it', async () => {
    await start({});
    const reply = await post(url('wrong'), JSON.stringify(cardAdded()), { chunked: true });
    expect(reply.status).toBe(401);
  });

  it('accepts a chunked body under the limit when raw bodies are kept', async () => {
    await start({ bodyLimitBytes: 4096 }, true);
    const reply = await post(url(SECRET), paddedWithSpaces(1000), { chunked: true });
    expect(reply.status).toBe(200);
    expect(handled()).toHaveLength(1);
  });

  it('refuses by Content-Length with 413 before verification, for any caller', async () => {
    await start({ bodyLimitBytes: 4096 });
    for (const token of ['wrong', SECRET]) {
      const reply = await post(url(token), paddedWithSpaces(5000));
      expect(reply.status).toBe(413);
      expect(JSON.parse(reply.body)).toEqual(TOO_LARGE);
    }
    expect(handled()).toEqual([]);
  });

  it('refuses a body over the default 64 KiB with the same reply as the framework parser past its own limit', async () => {
    await start({});
    const overRoute = await post(url(SECRET), paddedWithSpaces(70_000));
    const overFramework = await post(url(SECRET), paddedWithSpaces(2_000_000));
    expect(overRoute.status).toBe(413);
    expect(JSON.parse(overRoute.body)).toEqual(TOO_LARGE);
    expect(overFramework.status).toBe(413);
    expect(JSON.parse(overFramework.body)).toEqual(TOO_LARGE);
    expect(handled()).toEqual([]);
  });
});

/** A valid notification padded with whitespace to exactly `bytes` bytes. */
function notificationOfBytes(notification: Record<string, unknown>, bytes: number): string {
  const text = JSON.stringify(notification);
  return text.replace('{', `{${' '.repeat(bytes - Buffer.byteLength(text))}`);
}

/*
 * `bodyLimitBytes` means the same on both adapters, whether the app keeps raw bodies or not: a chunked body (no
 * Content-Length) is counted as the framework's parser reads it, and one past the limit but within the parser's own
 * (100 kB on Express) gets the route's 413 after verification, is not handled and not recorded as acknowledged.
 */
describe.each(ADAPTERS.flatMap((adapter) => [false, true].map((rawBody) => [adapter, rawBody] as const)))(
  'chunked bodies between the default limit and 100 kB on %s, rawBody %s',
  (adapter, rawBody) => {
    let running: NotificationsApp;
    let logger: RecordingLogger;

    beforeAll(async () => {
      logger = new RecordingLogger();
      running = await startNotificationsApp({
        adapter,
        logger,
        rawBody,
        notifications: { verification: { secret: { value: SECRET } } },
        providers: [CardEvents],
      });
    });
    afterAll(() => running.close());

    const url = (token: string) => running.url(`${PATH}?token=${token}`);
    const handled = () => running.app.get(CardEvents).received;

    it.each([65_537, 65_600, 80_000, 100_000])(
      'refuses %i bytes with 413 and runs no handler; the same notification within the limit is then handled',
      async (bytes) => {
        const before = handled().length;
        const notification = cardAdded();
        const reply = await post(url(SECRET), notificationOfBytes(notification, bytes), { chunked: true });
        expect(reply.status).toBe(413);
        expect(JSON.parse(reply.body)).toEqual(TOO_LARGE);
        expect(handled()).toHaveLength(before);
        expect(logger.messages('warn').at(-1)).toMatch(
          new RegExp(`: the body has ${bytes} bytes, over bodyLimitBytes \\(65536\\)$`),
        );

        const resent = await post(url(SECRET), notificationOfBytes(notification, 65_536), { chunked: true });
        expect(resent.status).toBe(200);
        expect(resent.body).toBe('{"ResultCode":0}');
        expect(handled()).toHaveLength(before + 1);
        expect(handled().at(-1)!.notification.shopper.id).toBe((notification.shopper as { id: string }).id);
      },
    );

    it('answers 401 to an unverified chunked body past the limit, before counting it', async () => {
      const before = handled().length;
      const reply = await post(url('wrong'), notificationOfBytes(cardAdded(), 80_000), { chunked: true });
      expect(reply.status).toBe(401);
      expect(JSON.parse(reply.body)).toEqual({ statusCode: 401, message: 'Unauthorized' });
      expect(handled()).toHaveLength(before);
    });
  },
);
