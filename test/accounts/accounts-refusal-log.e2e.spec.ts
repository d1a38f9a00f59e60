import { afterEach, describe, expect, it } from 'vitest';
import {
  ADAPTERS,
  post,
  startNotificationsApp,
  type NotificationsApp,
} from '../notifications/notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { accountOptions, registration, type TestAccount, UNUSED_BASE_URL } from './accounts-test-app.js';

/** Two accounts whose routes share a suffix: `b`'s path ends with `a`'s whole path. */
const A: TestAccount = {
  name: 'a',
  apiKey: 'a-api-key-31d9',
  secret: 'a-notifications-secret-8e21',
  path: 'payouts/notifications',
};
const B: TestAccount = {
  name: 'b',
  apiKey: 'b-api-key-77c0',
  secret: 'b-notifications-secret-4f6a',
  path: 'x/payouts/notifications',
};

/*
 * A refusal of the framework's parser, which runs before routing, is logged once, for the account whose route the
 * request was for, compared by the whole path; every refusal line names the account and the route.
 */
describe.each(ADAPTERS)('refusal log of two accounts whose routes share a suffix, on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(): Promise<NotificationsApp> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      globalPrefix: 'api',
      imports: [A, B].map((account) =>
        registration('forRoot', { name: account.name }, accountOptions(account, UNUSED_BASE_URL)),
      ),
    });
    return running;
  }

  const refusals = () => logger.messages('warn').filter((line) => line.startsWith('Notification refused'));
  const malformed = (path: string, secret: string) => post(`${running!.url(`api/${path}`)}?token=${secret}`, '{"a":');

  it("logs malformed JSON sent to b's route once, for b, and to a's route once, for a", async () => {
    await start();
    expect((await malformed(B.path, B.secret)).status).toBe(400);
    expect(refusals()).toEqual([
      expect.stringMatching(
        /^Notification refused with 400 from 127\.0\.0\.1 \(account b, \/x\/payouts\/notifications\): /,
      ),
    ]);
    expect((await malformed(A.path, A.secret)).status).toBe(400);
    expect(refusals()).toHaveLength(2);
    expect(refusals()[1]).toMatch(
      /^Notification refused with 400 from 127\.0\.0\.1 \(account a, \/payouts\/notifications\): /,
    );
  });

  it('logs nothing for a path that only ends like a route', async () => {
    await start();
    const reply = await malformed(`other/${A.path}`, A.secret);
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(refusals()).toEqual([]);
  });

  it("names the account in the route's own refusals", async () => {
    await start();
    expect((await post(`${running!.url(`api/${B.path}`)}?token=${A.secret}`, {})).status).toBe(401);
    expect(refusals()).toEqual([
      'Notification refused with 401 from 127.0.0.1 (account b, /x/payouts/notifications): the secret does not match (query parameter token)',
    ]);
  });
});
