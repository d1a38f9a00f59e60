import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { refusingBaseUrl } from '../payouts/payouts-api-stub.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

/** What must never reach a log line raw: C0 (CR, LF, ESC, BEL), DEL, C1, the line separators and the bidi controls. */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** A request_id with a forged line, terminal sequences (7-bit and 8-bit), BEL, U+2028 and a bidi override. */
const HOSTILE = 'pay-1\r\nWARN [PayoutRuns] forged\u001b[31m\u0007\u009b2J\u2028\u202eX';
const SHOWN = 'pay-1\\r\\nWARN [PayoutRuns] forged\\u001b[31m\\u0007\\u009b2J\\u2028\\u202eX';

/*
 * The worker of payout runs names a payout by its request_id, the caller's string: in its own words (printable) and
 * in the client's error message it quotes. Neither may forge a line or drive the operator's terminal.
 */
describeWithRedis('log lines of the payout-run worker, given a hostile request_id', () => {
  let redis: RedisServer;
  let started: RunsApp | undefined;

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.close();
  });
  afterEach(async () => {
    await started?.app.close();
    started = undefined;
  });

  it('escapes it in the retry warning "attempt 1 of 2 failed (…)" and in every line of the run', async () => {
    started = await startRunsApp(await refusingBaseUrl(), {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix: 'runs-log-injection',
      rateLimit: false,
      attempts: 2,
      backoffMs: 20,
    });
    const { runs, results, logger } = started;
    await runs.enqueue([payout(HOSTILE)], { runId: 'hostile' });
    await eventually(
      async () => ((await runs.progress('hostile'))?.completedAt && results.refused.length > 0 ? true : undefined),
      15_000,
      'the run ends with the payout refused',
    );

    expect(results.refused).toMatchObject([{ requestId: HOSTILE, attempt: 2, error: { name: 'PayoutsNetworkError' } }]);
    const retry = logger.messages('warn').find((message) => message.includes(': attempt 1 of 2 failed ('));
    expect(retry).toBe(
      `Payout "${SHOWN}" of run hostile: attempt 1 of 2 failed (Payout "${SHOWN}" of run hostile is retried: ` +
        `Payout request "${SHOWN}" (POST /payouts) was not sent: could not connect to the payouts API (ECONNREFUSED).)`,
    );
    for (const line of logger.lines.flatMap((entry) => entry.split('\n'))) expect(line).not.toMatch(UNSAFE);
  });
});
