import { describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError } from 'nestjs-payouts';
import { PayoutsAccessTokenError } from 'nestjs-payouts';
import { PayoutsApiError } from 'nestjs-payouts';
import { type HostileLog, type HostilePlan, hostileReply } from './hostile-replies.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

const TIMEOUT_MS = 300;
// One byte every 50 ms: the 60-byte body takes 3 s, ten times the deadline.
const BODY = JSON.stringify({ id: 'po_1', status: 'pending', note: 'x'.repeat(24) });
const dripping = (from: 'head' | 'body') => ({ bytes: 1, everyMs: 50, from }) as const;

describe('timeoutMs is a hard deadline per attempt', () => {
  const testbed = usePayoutsTestbed();

  /** Plays `plan` for every request; the log says whether the client left before the reply was complete. */
  async function payoutAgainst(plan: HostilePlan, requestId: string): Promise<{ error: unknown; log: HostileLog }> {
    const log: HostileLog = { finished: 0, abandoned: 0 };
    testbed.stub.reply(hostileReply(plan, log));
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { timeoutMs: TIMEOUT_MS });
    const error = await testbed.started.payouts.createPayout(walletPayoutRequest(requestId)).catch((e: unknown) => e);
    await expect.poll(() => log.finished + log.abandoned).toBe(testbed.stub.requests.length);
    return { error, log };
  }

  it('covers a body that drips in after a prompt 2xx head: outcome unknown, the reply abandoned', async () => {
    const { error, log } = await payoutAgainst({ status: 201, body: BODY, drip: dripping('body') }, 'req_drip');

    expect(error).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(error).toMatchObject({ requestId: 'req_drip', code: 'ETIMEDOUT', status: 201 });
    expect(log).toEqual({ finished: 0, abandoned: 1 });
    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('covers a head that drips in: outcome unknown, no status known', async () => {
    const { error, log } = await payoutAgainst({ status: 201, body: BODY, drip: dripping('head') }, 'req_head');

    expect(error).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(error).toMatchObject({ requestId: 'req_head', code: 'ETIMEDOUT', status: undefined });
    expect(log).toEqual({ finished: 0, abandoned: 1 });
  });

  it('keeps what arrived of an error body cut off by the deadline, and says so', async () => {
    const { error, log } = await payoutAgainst({ status: 422, body: BODY, drip: dripping('body') }, 'req_422');

    expect(error).toBeInstanceOf(PayoutsApiError);
    const apiError = error as PayoutsApiError;
    expect(apiError).toMatchObject({ status: 422, requestId: 'req_422', bodyTruncated: true });
    expect(typeof apiError.body).toBe('string');
    expect(BODY.startsWith(apiError.body as string)).toBe(true);
    expect((apiError.body as string).length).toBeLessThan(BODY.length);
    expect(apiError.message).toContain('; the reply body was not whole before the timeout and is kept truncated.');
    expect(log).toEqual({ finished: 0, abandoned: 1 });
  });

  it('retries a retryable status whose body timed out, as any other reply of that status', async () => {
    const { error } = await payoutAgainst({ status: 503, body: BODY, drip: dripping('body') }, 'req_503');

    expect(error).toMatchObject({ name: 'PayoutsApiError', status: 503, bodyTruncated: true });
    // The status alone proves the payout was not processed: retried like any 503, then given up.
    expect(testbed.stub.requests).toHaveLength(3);
  });
});

describe('the accessToken function is bounded by timeoutMs', () => {
  const testbed = usePayoutsTestbed();

  it('rejects with PayoutsAccessTokenError when the function never settles, and calls it afresh next time', async () => {
    let calls = 0;
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, {
      timeoutMs: TIMEOUT_MS,
      accessToken: () => {
        calls += 1;
        return calls === 1 ? new Promise<string>(() => undefined) : 'second-token';
      },
    });

    const error = await testbed.started.payouts.createPayout(walletPayoutRequest('req_token')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsAccessTokenError);
    expect((error as Error).message).toBe(
      `Payout request "req_token" (POST /payouts) was not sent: the accessToken function did not return a token within ${TIMEOUT_MS} ms.`,
    );
    expect(testbed.stub.requests).toHaveLength(0);

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest('req_next'))).resolves.toMatchObject({
      status: 201,
    });
    expect(calls).toBe(2);
    expect(testbed.stub.requests.map(({ headers }) => headers.authorization)).toEqual(['Bearer second-token']);
  }, 10_000);

  it("bounds the token refresh after a 401 by the next attempt's deadline", async () => {
    let calls = 0;
    testbed.stub.reply({ status: 401, body: {} });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, {
      timeoutMs: TIMEOUT_MS,
      accessToken: () => (++calls === 1 ? 'expired-token' : new Promise<string>(() => undefined)),
    });

    const error = await testbed.started.payouts
      .createPayout(walletPayoutRequest('req_refresh'))
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsAccessTokenError);
    expect(calls).toBe(2);
    expect(testbed.stub.requests).toHaveLength(1);
  }, 10_000);
});
