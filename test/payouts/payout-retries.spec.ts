import { describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError } from 'nestjs-payouts';
import { PayoutsApiError } from 'nestjs-payouts';
import { PayoutsNetworkError } from 'nestjs-payouts';
import { MockFault } from 'nestjs-payouts/testing';
import { parseRetryAfterMs, retryDelayMs } from '../../lib/payouts/retry-delay.js';
import { refusingBaseUrl } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { startPayoutsAppFor, useMockPayoutsTestbed } from './payouts-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

describe('createPayout retries', () => {
  const testbed = useMockPayoutsTestbed();

  it.each([429, 503])('sends the same body and request_id again after HTTP %i', async (status) => {
    testbed.mock.fail({ times: 2 }, MockFault.status(status, { error: 'busy' }));
    testbed.started = await startPayoutsAppFor(testbed.mock.baseUrl);
    const request = walletPayoutRequest('req_same');

    const result = await testbed.started.payouts.createPayout(request);

    expect(result).toMatchObject({ status: 201, body: testbed.mock.payouts.get('req_same') });
    const calls = testbed.mock.calls;
    expect(calls.map(({ body }) => body)).toStrictEqual([request, request, request]);
    expect(calls.map((call) => call.status)).toEqual([status, status, 201]);
    // The mock accepts only the configured token: the same one was sent each time.
    expect(calls.every(({ credentials }) => credentials.accessToken === 'valid')).toBe(true);
  });

  it('gives up after maxRetries (default 2) with the last reply as PayoutsApiError', async () => {
    testbed.mock.fail({}, MockFault.status(503, { error: 'maintenance' }));
    testbed.started = await startPayoutsAppFor(testbed.mock.baseUrl);

    const error = await testbed.started.payouts.createPayout(walletPayoutRequest('req_busy')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error).toMatchObject({ status: 503, body: { error: 'maintenance' }, requestId: 'req_busy' });
    expect(testbed.mock.calls).toHaveLength(3);
  });

  it('follows a configured maxRetries and retryOnStatus', async () => {
    testbed.mock.fail({}, MockFault.status(502, {}));
    testbed.started = await startPayoutsAppFor(testbed.mock.baseUrl, {
      retries: { maxRetries: 4, retryOnStatus: [502], baseDelayMs: 1, maxDelayMs: 2 },
    });

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ status: 502 });

    expect(testbed.mock.calls).toHaveLength(5);
  });

  it('does not retry a status outside retryOnStatus', async () => {
    testbed.mock.fail({}, MockFault.status(503, {}));
    testbed.started = await startPayoutsAppFor(testbed.mock.baseUrl, {
      retries: { retryOnStatus: [429], baseDelayMs: 1 },
    });

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ status: 503 });

    expect(testbed.mock.calls).toHaveLength(1);
  });

  it('sends once with retries: 0', async () => {
    testbed.mock.fail({}, MockFault.status(429, {}));
    testbed.started = await startPayoutsAppFor(testbed.mock.baseUrl, { retries: 0 });

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ status: 429 });

    expect(testbed.mock.calls).toHaveLength(1);
  });

  it('never retries a timeout: the payout may exist', async () => {
    // Longer than the test runs: the mock drops the answer when it closes.
    testbed.mock.fail({}, MockFault.latency(600_000));
    testbed.started = await startPayoutsAppFor(testbed.mock.baseUrl, { timeoutMs: 100 });

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toBeInstanceOf(
      PayoutOutcomeUnknownError,
    );

    expect(testbed.mock.calls).toHaveLength(1);
  });

  it('never retries a connection lost after sending', async () => {
    testbed.mock.fail({ times: 1 }, MockFault.resetAfterCommit());
    testbed.started = await startPayoutsAppFor(testbed.mock.baseUrl);

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toBeInstanceOf(
      PayoutOutcomeUnknownError,
    );

    expect(testbed.mock.calls).toHaveLength(1);
    expect(testbed.mock.calls[0]).toMatchObject({ reset: true, committed: true });
  });

  it('retries a refused connection, then rejects with PayoutsNetworkError', async () => {
    const logger = new RecordingLogger();
    testbed.started = await startPayoutsAppFor(await refusingBaseUrl(), {}, logger);

    const error = await testbed.started.payouts.createPayout(walletPayoutRequest('req_down')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsNetworkError);
    const retries = logger.lines.filter((line) => line.includes('"req_down": ECONNREFUSED, retry'));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatch(
      /^warn: Payout request "req_down": ECONNREFUSED, retry 1 of 2 in \d+ ms PayoutsService$/,
    );
  });

  it('honours Retry-After, capped at maxDelayMs', async () => {
    // An hour-long Retry-After would time the test out if the cap were not applied.
    const logger = new RecordingLogger();
    testbed.mock.fail({ times: 1 }, MockFault.rateLimited(3600));
    testbed.started = await startPayoutsAppFor(
      testbed.mock.baseUrl,
      { retries: { baseDelayMs: 1, maxDelayMs: 7 } },
      logger,
    );

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest('req_later'))).resolves.toMatchObject({
      status: 201,
    });

    expect(testbed.mock.calls).toHaveLength(2);
    expect(logger.lines).toContain('warn: Payout request "req_later": HTTP 429, retry 1 of 2 in 7 ms PayoutsService');
  });

  it('honours a Retry-After HTTP date', async () => {
    const logger = new RecordingLogger();
    const inAnHour = new Date(Date.now() + 3_600_000).toUTCString();
    testbed.mock.fail({ times: 1 }, MockFault.unavailable(inAnHour));
    testbed.started = await startPayoutsAppFor(
      testbed.mock.baseUrl,
      { retries: { baseDelayMs: 1, maxDelayMs: 9 } },
      logger,
    );

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest('req_date'))).resolves.toMatchObject({
      status: 201,
    });

    expect(logger.lines).toContain('warn: Payout request "req_date": HTTP 503, retry 1 of 2 in 9 ms PayoutsService');
  });
});

describe('retryDelayMs', () => {
  const policy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000, retryOnStatus: [429, 503] };
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('draws the backoff from 0 up to base * 2^retry (full jitter)', () => {
    expect(retryDelayMs(0, policy, undefined, () => 0, now)).toBe(0);
    expect(retryDelayMs(0, policy, undefined, () => 0.999, now)).toBe(99);
    expect(retryDelayMs(1, policy, undefined, () => 0.5, now)).toBe(100);
    expect(retryDelayMs(2, policy, undefined, () => 0.5, now)).toBe(200);
  });

  it('caps the backoff at maxDelayMs', () => {
    expect(retryDelayMs(10, policy, undefined, () => 0.999, now)).toBe(999);
  });

  it('uses Retry-After seconds instead of the backoff', () => {
    expect(retryDelayMs(0, policy, '0', () => 0.5, now)).toBe(0);
    expect(retryDelayMs(0, policy, '1', () => 0.5, now)).toBe(1000);
    expect(retryDelayMs(0, policy, '120', () => 0.5, now)).toBe(1000);
  });

  it('uses a Retry-After date, capped, and never negative', () => {
    expect(retryDelayMs(0, policy, 'Tue, 01 Jan 2030 00:00:00 GMT', () => 0.5, now)).toBe(0);
    expect(parseRetryAfterMs('Tue, 01 Jan 2030 00:00:00 GMT', now + 5000)).toBe(0);
    expect(parseRetryAfterMs('Tue, 01 Jan 2030 00:00:00 GMT', now - 400)).toBe(400);
    expect(retryDelayMs(0, policy, 'Tue, 01 Jan 2030 01:00:00 GMT', () => 0.5, now)).toBe(1000);
  });

  it('ignores a malformed Retry-After', () => {
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs('-5', now)).toBeUndefined();
    expect(retryDelayMs(1, policy, 'soon', () => 0.5, now)).toBe(100);
  });
});
