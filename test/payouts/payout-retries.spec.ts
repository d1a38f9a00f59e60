import { describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError } from 'nestjs-payouts';
import { PayoutsApiError } from 'nestjs-payouts';
import { PayoutsNetworkError } from 'nestjs-payouts';
import { parseRetryAfterMs, retryDelayMs } from '../../lib/payouts/retry-delay.js';
import { refusingBaseUrl } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

describe('createPayout retries', () => {
  const testbed = usePayoutsTestbed();

  const bodies = () => testbed.stub.requests.map(({ body }) => body);

  it.each([429, 503])('sends the same body and request_id again after HTTP %i', async (status) => {
    testbed.stub.reply(
      { status, body: { error: 'busy' } },
      { status, body: { error: 'busy' } },
      { status: 201, body: { id: 'po_1' } },
    );
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);
    const request = walletPayoutRequest('req_same');

    const result = await testbed.started.payouts.createPayout(request);

    expect(result).toMatchObject({ status: 201, body: { id: 'po_1' } });
    expect(bodies()).toEqual([JSON.stringify(request), JSON.stringify(request), JSON.stringify(request)]);
    expect(new Set(testbed.stub.requests.map(({ headers }) => headers.authorization)).size).toBe(1);
  });

  it('gives up after maxRetries (default 2) with the last reply as PayoutsApiError', async () => {
    testbed.stub.reply({ status: 503, body: { error: 'maintenance' } });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await testbed.started.payouts.createPayout(walletPayoutRequest('req_busy')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error).toMatchObject({ status: 503, body: { error: 'maintenance' }, requestId: 'req_busy' });
    expect(testbed.stub.requests).toHaveLength(3);
  });

  it('follows a configured maxRetries and retryOnStatus', async () => {
    testbed.stub.reply({ status: 502, body: {} });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, {
      retries: { maxRetries: 4, retryOnStatus: [502], baseDelayMs: 1, maxDelayMs: 2 },
    });

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ status: 502 });

    expect(testbed.stub.requests).toHaveLength(5);
  });

  it('does not retry a status outside retryOnStatus', async () => {
    testbed.stub.reply({ status: 503, body: {} });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, {
      retries: { retryOnStatus: [429], baseDelayMs: 1 },
    });

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ status: 503 });

    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('sends once with retries: 0', async () => {
    testbed.stub.reply({ status: 429, body: {} });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { retries: 0 });

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ status: 429 });

    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('never retries a timeout: the payout may exist', async () => {
    testbed.stub.reply('hang');
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { timeoutMs: 100 });

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toBeInstanceOf(
      PayoutOutcomeUnknownError,
    );

    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('never retries a connection lost after sending', async () => {
    testbed.stub.reply('destroy', { status: 201, body: {} });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest())).rejects.toBeInstanceOf(
      PayoutOutcomeUnknownError,
    );

    expect(testbed.stub.requests).toHaveLength(1);
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
    testbed.stub.reply({ status: 429, headers: { 'retry-after': '3600' }, body: {} }, { status: 201, body: {} });
    testbed.started = await startPayoutsAppFor(
      testbed.stub.baseUrl,
      { retries: { baseDelayMs: 1, maxDelayMs: 7 } },
      logger,
    );

    await expect(testbed.started.payouts.createPayout(walletPayoutRequest('req_later'))).resolves.toMatchObject({
      status: 201,
    });

    expect(testbed.stub.requests).toHaveLength(2);
    expect(logger.lines).toContain('warn: Payout request "req_later": HTTP 429, retry 1 of 2 in 7 ms PayoutsService');
  });

  it('honours a Retry-After HTTP date', async () => {
    const logger = new RecordingLogger();
    const inAnHour = new Date(Date.now() + 3_600_000).toUTCString();
    testbed.stub.reply({ status: 503, headers: { 'retry-after': inAnHour }, body: {} }, { status: 201, body: {} });
    testbed.started = await startPayoutsAppFor(
      testbed.stub.baseUrl,
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
