import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import {
  ADAPTERS,
  cardAdded,
  type HttpReply,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const SECRET = 'echo-secret-5e1f0a7b';
const PATH = 'payouts/notifications';

function send(url: string, method: string): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, agent: false }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () =>
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/*
 * The secret must not travel back in a reply. The route answers every method on its own path itself; a mistyped path
 * is the app's 404, which Nest words with the whole URL: only a secret in a header stays out of it.
 */
describe.each(ADAPTERS)('the secret in replies on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(secret: { header?: string }): Promise<NotificationsApp> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      notifications: { verification: { secret: { value: SECRET, ...secret } } },
      providers: [CardEvents],
    });
    return running;
  }

  it.each([['GET'], ['PUT'], ['PATCH'], ['DELETE'], ['OPTIONS']])(
    'answers %s on the route path with 405 and Allow: POST, never echoing the URL',
    async (method) => {
      await start({});
      const reply = await send(running!.url(`${PATH}?token=${SECRET}`), method);
      expect(reply.status).toBe(405);
      expect(reply.headers.allow).toBe('POST');
      expect(JSON.parse(reply.body)).toEqual({ statusCode: 405, message: 'Method Not Allowed' });
      expect(running!.app.get(CardEvents).received).toEqual([]);
      expect(logger.messages('warn')).toContainEqual(`Notification refused with 405 from 127.0.0.1: ${method} is not POST`);
    },
  );

  it('answers HEAD with 405 and no body', async () => {
    await start({});
    const reply = await send(running!.url(`${PATH}?token=${SECRET}`), 'HEAD');
    expect(reply.status).toBe(405);
    expect(reply.body).toBe('');
  });

  it("leaves a mistyped path to the app's 404, which echoes a query-string secret but not a header one", async () => {
    await start({});
    const inQuery = await post(running!.url(`payouts/notification?token=${SECRET}`), cardAdded());
    expect(inQuery.status).toBe(404);
    expect(inQuery.body).toContain(SECRET);
    await running!.close();

    await start({ header: 'x-notifications-token' });
    const inHeader = await post(running!.url('payouts/notification'), cardAdded(), {
      headers: { 'x-notifications-token': SECRET },
    });
    expect(inHeader.status).toBe(404);
    expect(inHeader.body).not.toContain(SECRET);
  });
});
