import { afterEach, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const SECRET = 'refusal-log-secret-7f3a9c';
const WRONG = 'presented-wrong-token-4d2b';
const MARKER = 'body-marker-never-logged';
const PATH = 'payouts/notifications';

/*
 * Every refused notification leaves one WARN line (status, client address, reason), so that an operator sees a wrong
 * secret at once; never the secret, the presented token or the body; and a flood cannot fill the logs.
 */
describe.each(ADAPTERS)('refusal log on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(rawBody = false): Promise<NotificationsApp> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      rawBody,
      notifications: { verification: { secret: { value: SECRET } }, bodyLimitBytes: 2048 },
      providers: [CardEvents],
    });
    return running;
  }

  const url = (token: string) => running!.url(`${PATH}?token=${token}`);
  const refusals = () => logger.messages('warn').filter((line) => line.startsWith('Notification refused'));

  function expectNothingSecretLogged(): void {
    for (const line of logger.lines) {
      expect(line).not.toContain(SECRET);
      expect(line).not.toContain(WRONG);
      expect(line).not.toContain(MARKER);
    }
  }

  it('logs each kind of refusal once, with its status, the client address and the reason', async () => {
    await start();
    const marked = cardAdded({ shopper: { id: MARKER, email: 'not-an-email' } });
    await post(url(WRONG), marked);
    await post(url(''), marked).then(() => post(running!.url(PATH), marked));
    await post(url(SECRET), { ...marked, timestamp: MARKER });
    await post(url(SECRET), JSON.stringify(marked), { headers: { 'content-type': 'text/plain' } });
    await post(url(SECRET), JSON.stringify(marked), {
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    await post(url(SECRET), cardAdded({ padding: MARKER.repeat(200) }));
    await post(url(SECRET), marked, { chunked: true });

    expect(refusals()).toEqual([
      'Notification refused with 401 from 127.0.0.1 (account default, /payouts/notifications): the secret does not match (query parameter token)',
      'Notification refused with 401 from 127.0.0.1 (account default, /payouts/notifications): the secret does not match (query parameter token)',
      'Notification refused with 401 from 127.0.0.1 (account default, /payouts/notifications): the secret is missing (query parameter token)',
      'Notification refused with 400 from 127.0.0.1 (account default, /payouts/notifications): invalid fields timestamp, shopper.email',
      'Notification refused with 415 from 127.0.0.1 (account default, /payouts/notifications): Content-Type text/plain is not application/json',
      'Notification refused with 415 from 127.0.0.1 (account default, /payouts/notifications): charset latin1 is not UTF-8',
      expect.stringMatching(
        /^Notification refused with 413 from 127\.0\.0\.1 \(account default, \/payouts\/notifications\): the body has \d+ bytes, over bodyLimitBytes \(2048\)$/,
      ),
      'Notification refused with 400 from 127.0.0.1 (account default, /payouts/notifications): invalid fields shopper.email',
    ]);
    expectNothingSecretLogged();
  });

  it("also logs what the framework's JSON parser refuses before the route runs, without quoting the body", async () => {
    await start();
    await post(url(SECRET), `{"shopper":"${MARKER}",`);
    await post(url(SECRET), `{"__proto__":{"x":"${MARKER}"},"eventType":"PAYMENT_METHOD_ADDED"}`);
    const parserReason =
      adapter === 'express'
        ? "the body is not a JSON object (refused by Express's JSON parser)"
        : "the body is not valid JSON, or has a key that could replace a prototype (refused by Fastify's JSON parser)";
    const [malformed, prototypeKey] = refusals();
    expect(malformed).toBe(
      `Notification refused with 400 from 127.0.0.1 (account default, /payouts/notifications): ${parserReason}`,
    );
    // Express's parser accepts the key, and the route refuses it naming the field.
    expect(prototypeKey).toBe(
      adapter === 'express'
        ? 'Notification refused with 400 from 127.0.0.1 (account default, /payouts/notifications): invalid fields timestamp, shopper, paymentMethod'
        : `Notification refused with 400 from 127.0.0.1 (account default, /payouts/notifications): ${parserReason}`,
    );
    expectNothingSecretLogged();
  });

  it('logs at most 10 refusals a minute per status, and sums up the rest in one line', async () => {
    await start();
    for (let attempt = 0; attempt < 25; attempt++) await post(url(WRONG), cardAdded());
    await post(url(SECRET), { eventType: 'PAYMENT_METHOD_ADDED' });
    expect(refusals().filter((line) => line.includes(' 401 '))).toHaveLength(10);
    expect(refusals().filter((line) => line.includes(' 400 '))).toHaveLength(1);

    await running!.close();
    running = undefined;
    expect(logger.messages('warn')).toContainEqual(
      'Notification refusals not logged one by one in the last 60 s (account default, /payouts/notifications): 15 with 401',
    );
    expectNothingSecretLogged();
  });
});
