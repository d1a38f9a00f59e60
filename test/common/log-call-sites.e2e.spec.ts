import { afterEach, describe, expect, it } from 'vitest';
import {
  type CreatePayoutRequest,
  PayoutOutcomeUnknownError,
  PayoutRequestConflictError,
  PayoutsAbortedError,
  PayoutsAccessTokenError,
  PayoutsApiError,
  PayoutsNetworkError,
  type NotificationsOptions,
} from 'nestjs-payouts';
import { PackageLogger } from '../../lib/common/package-logger.js';
import { throttledErrorLog } from '../../lib/common/throttled-error-log.js';
import { CardEvents } from '../notifications/notification-handlers.fixture.js';
import { cardAdded, post, startNotificationsApp } from '../notifications/notifications-test-app.js';
import { refusingBaseUrl } from '../payouts/payouts-api-stub.js';
import { startPayoutsAppFor } from '../payouts/payouts-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

/** What must never reach a log line raw: C0 (CR, LF, ESC, BEL), DEL, C1, the line separators and the bidi controls. */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** A value from outside with every kind of unsafe character: a forged line, terminal sequences, bidi. */
const HOSTILE = 'id-1\r\n[Nest] 1 - ERROR forged\u001b[31m\u0007\u009b2J\u0085\u2028\u202eX';
const SHOWN = 'id-1\\r\\n[Nest] 1 - ERROR forged\\u001b[31m\\u0007\\u009b2J\\u0085\\u2028\\u202eX';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Every line the logger got, the stacks that follow a message line by line; none may hold an unsafe character. */
function expectEveryLineSafe(logger: RecordingLogger): void {
  for (const line of logger.lines.flatMap((entry) => entry.split('\n'))) expect(line).not.toMatch(UNSAFE);
}

function payoutRequest(requestId: string): CreatePayoutRequest {
  return {
    payout_method: {
      type: 'wallet',
      payment_method: 'mpesa_ke',
      beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: '254712345678' } },
    },
    amount: { value: '10.00', currency_code: 'KES' },
    country_code: 'KE',
    purpose: 'salary_payment',
    reference: 'Payout 1',
    request_id: requestId,
  };
}

async function notificationsApp(notifications: Partial<NotificationsOptions>, providers = [CardEvents]) {
  const logger = new RecordingLogger();
  const running = await startNotificationsApp({
    adapter: 'express',
    logger,
    notifications: { verification: 'none', ...notifications } as NotificationsOptions,
    providers,
  });
  closers.push(() => running.close());
  return { logger, running, url: running.url('payouts/notifications') };
}

/** An app whose payouts go to a port that refuses connections: the client retries once, then gives up. */
async function payoutsAppOfClosedPort() {
  const logger = new RecordingLogger();
  const started = await startPayoutsAppFor(
    await refusingBaseUrl(),
    { retries: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 5 } },
    logger,
  );
  closers.push(() => started.app.close());
  return { logger, started };
}

/*
 * Each place of the package that writes a log line, given a value from outside with every unsafe character: the line
 * is written, names the value escaped, and no line holds a raw unsafe character.
 */
describe('log call sites, given hostile values', () => {
  it.each<[string, (hostile: string) => Promise<RecordingLogger>, string, RegExp]>([
    [
      "the payouts client's retry warning (request_id)",
      async (hostile) => {
        const { logger, started } = await payoutsAppOfClosedPort();
        await expect(started.payouts.createPayout(payoutRequest(hostile))).rejects.toThrow(PayoutsNetworkError);
        return logger;
      },
      'warn',
      /^Payout request "id-1\\r\\n\[Nest\] 1 - ERROR forged\\u001b\[31m\\u0007\\u009b2J\\u0085\\u2028\\u202eX": ECONNREFUSED, retry 1 of 1 in \d+ ms PayoutsService$/,
    ],
    [
      'a PayoutsService event listener that threw (its message)',
      async (hostile) => {
        const { logger, started } = await payoutsAppOfClosedPort();
        started.payouts.on('request', () => {
          throw new Error(hostile);
        });
        await expect(started.payouts.createPayout(payoutRequest('req-1'))).rejects.toThrow(PayoutsNetworkError);
        return logger;
      },
      'error',
      /^A 'request' listener failed; the other listeners and the call went on Error: id-1\\r\\n.*\\u202eX\n\s+at /,
    ],
    [
      'the inline dispatcher, for a notification no handler takes (event type, dedupe key)',
      async (hostile) => {
        const { logger, url } = await notificationsApp({}, []);
        const notification = cardAdded({ eventType: hostile });
        (notification.shopper as { id: string }).id = hostile;
        expect((await post(url, notification)).status).toBe(200);
        return logger;
      },
      'warn',
      /^No handler for "id-1\\r\\n.*\\u202eX" notification id-1%0D%0A.*%E2%80%AEX:pmt_\d+:\S+; acknowledged PayoutsNotifications$/,
    ],
    [
      'the inline dispatcher, for a handler that threw (dedupe key, its message)',
      async (hostile) => {
        const { logger, running, url } = await notificationsApp({});
        running.app.get(CardEvents).behaviour = () => {
          throw new Error(hostile);
        };
        const notification = cardAdded();
        (notification.shopper as { id: string }).id = hostile;
        expect((await post(url, notification)).status).toBe(500);
        return logger;
      },
      'error',
      /^CardEvents\.added failed on notification PAYMENT_METHOD_ADDED:id-1%0D%0A\S+; not acknowledged, so the service sends it again Error: id-1\\r\\n.*\\u202eX\n\s+at /,
    ],
    [
      'the inline dispatcher, for a dedupe store that failed to claim (its message)',
      async (hostile) => {
        const failing = {
          claim: () => Promise.reject(new Error(hostile)),
          complete: () => Promise.resolve(),
          release: () => Promise.resolve(),
        };
        const { logger, url } = await notificationsApp({ dedupe: { store: failing } });
        expect((await post(url, cardAdded())).status).toBe(500);
        return logger;
      },
      'error',
      /^The dedupe store failed to claim notification \S+; not acknowledged Error: id-1\\r\\n.*\\u202eX\n\s+at /,
    ],
    [
      'the verifier, for a verify function that threw (its message)',
      async (hostile) => {
        const { logger, url } = await notificationsApp({
          verification: {
            verify: () => {
              throw new Error(hostile);
            },
          },
        });
        expect((await post(url, cardAdded())).status).toBe(401);
        return logger;
      },
      'error',
      /^The notifications verify function failed; the request is refused Error: id-1\\r\\n.*\\u202eX\n\s+at /,
    ],
    [
      "the throttled log of a Redis client's errors (the error's message)",
      async (hostile) => {
        const logger = new RecordingLogger();
        throttledErrorLog(new PackageLogger(logger), 'Queue payout-runs')(new Error(`connect ${hostile}`));
        return logger;
      },
      'error',
      /^Queue payout-runs: connect id-1\\r\\n.*\\u202eX$/,
    ],
  ])('%s', async (_site, run, level, expected) => {
    const logger = await run(HOSTILE);
    // Each call as `level: message stack context` (a Nest Logger's context last), the stack in its lines.
    const written = logger.lines
      .filter((line) => line.startsWith(`${level}: `))
      .map((line) => line.slice(level.length + 2));
    expect(written).toContainEqual(expect.stringMatching(expected));
    expectEveryLineSafe(logger);
  });

  it.each([
    ['PayoutsNetworkError', new PayoutsNetworkError(HOSTILE, 'ECONNREFUSED', { method: 'POST', path: '/payouts' })],
    ['PayoutsApiError', new PayoutsApiError(422, {}, HOSTILE, { method: 'POST', path: '/payouts' })],
    ['PayoutOutcomeUnknownError', new PayoutOutcomeUnknownError(HOSTILE, 'ECONNRESET')],
    ['PayoutRequestConflictError', new PayoutRequestConflictError(HOSTILE)],
    ['PayoutsAbortedError', new PayoutsAbortedError(HOSTILE)],
    ['PayoutsAccessTokenError', new PayoutsAccessTokenError(HOSTILE, 'threw')],
  ])(
    '%s names the request_id quoted and escaped, so its message is one safe line wherever it is logged',
    (_n, error) => {
      expect(error.message).toContain(`Payout request "${SHOWN}"`);
      expect(error.message).not.toMatch(UNSAFE);
    },
  );
});
