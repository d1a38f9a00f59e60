import { describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError } from 'nestjs-payouts';
import { PayoutsAbortedError } from 'nestjs-payouts';
import { PayoutsCallOptionsError } from 'nestjs-payouts';
import type { PayoutsCallOptions } from 'nestjs-payouts';
import { RecordingLogger } from '../recording-logger.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { ACCESS_TOKEN, API_KEY, startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

describe('createPayout per-call options', () => {
  const testbed = usePayoutsTestbed();

  async function rejection(options: PayoutsCallOptions, requestId = 'req_opt'): Promise<unknown> {
    return testbed.started!.payouts.createPayout(walletPayoutRequest(requestId), options).catch((e: unknown) => e);
  }

  it('timeoutMs replaces the module timeout for this call', async () => {
    testbed.stub.reply('hang');
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { timeoutMs: 60_000 });

    const error = await rejection({ timeoutMs: 100 });

    expect(error).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(error).toMatchObject({ code: 'ETIMEDOUT', requestId: 'req_opt' });
  });

  it('sends extra headers over the module defaults, and never lets either touch the credentials', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, {
      headers: { 'X-Tenant': 'tenant-default', 'X-Channel': 'web', 'User-Agent': 'merchant-app/2.1' },
    });

    await testbed.started.payouts.createPayout(walletPayoutRequest(), {
      headers: { 'x-tenant': 'tenant-7', 'X-Correlation-Id': 'c-1' },
    });

    expect(testbed.stub.requests[0]!.headers).toMatchObject({
      'x-tenant': 'tenant-7',
      'x-channel': 'web',
      'x-correlation-id': 'c-1',
      'user-agent': 'merchant-app/2.1',
      'x-api-key': API_KEY,
      authorization: `Bearer ${ACCESS_TOKEN}`,
      'content-type': 'application/json',
    });
  });

  it.each([
    ['Authorization', 'headers.authorization'],
    ['x-api-key', 'headers.x-api-key'],
    ['Content-Type', 'headers.content-type'],
    ['Accept-Encoding', 'headers.accept-encoding'],
    ['Host', 'headers.host'],
    // Underscore spellings, which many servers and gateways read as the dashed header.
    ['x_api_key', 'headers.x_api_key'],
    ['X_API_KEY', 'headers.x_api_key'],
    ['X-Api_Key', 'headers.x-api_key'],
    ['proxy_authorization', 'headers.proxy_authorization'],
    ['Content_Type', 'headers.content_type'],
    ['transfer_encoding', 'headers.transfer_encoding'],
  ])('refuses a %s header, sending nothing', async (name, option) => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await rejection({ headers: { [name]: 'Bearer attacker-chosen-7f1c' } });

    expect(error).toBeInstanceOf(PayoutsCallOptionsError);
    expect(error).toMatchObject({ option });
    expect((error as Error).message).not.toContain('attacker-chosen-7f1c');
    expect(testbed.stub.requests).toHaveLength(0);
  });

  it.each<[string, PayoutsCallOptions, string]>([
    ['a header value with a line break', { headers: { 'x-note': 'a\r\nx-api-key: forged' } }, 'headers.x-note'],
    ['a header name with a space', { headers: { 'bad name': 'x' } }, 'headers'],
    ['a header value that is not a string', { headers: { 'x-count': 3 as unknown as string } }, 'headers.x-count'],
    ['timeoutMs zero', { timeoutMs: 0 }, 'timeoutMs'],
    ['timeoutMs fractional', { timeoutMs: 2.5 }, 'timeoutMs'],
    ['timeoutMs a string', { timeoutMs: '100' as unknown as number }, 'timeoutMs'],
    // A timer longer than 2^31 - 1 ms fires after 1 ms: a 25-day deadline would become an instant timeout.
    ['timeoutMs past what a timer can wait', { timeoutMs: 2_147_483_648 }, 'timeoutMs'],
    ['signal not an AbortSignal', { signal: { aborted: false } as AbortSignal }, 'signal'],
  ])('refuses %s with PayoutsCallOptionsError, sending nothing', async (_case, options, option) => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await rejection(options);

    expect(error).toBeInstanceOf(PayoutsCallOptionsError);
    expect(error).toMatchObject({ option, name: 'PayoutsCallOptionsError' });
    expect(testbed.stub.requests).toHaveLength(0);
  });

  it('accepts the longest timeoutMs a timer can wait', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    await expect(
      testbed.started.payouts.createPayout(walletPayoutRequest(), { timeoutMs: 2_147_483_647 }),
    ).resolves.toMatchObject({ status: 201 });
  });

  it.each<[string, object, string, string]>([
    ['a misspelt option', { timeout: 100 }, 'timeout', 'a known option name (did you mean "timeoutMs"?)'],
    [
      'an axios option that would turn redirects on',
      { maxRedirects: 5 },
      'maxRedirects',
      'one of timeoutMs, signal, headers',
    ],
    ['a misspelt header option', { header: { 'x-a': 'b' } }, 'header', 'a known option name (did you mean "headers"?)'],
  ])('refuses %s, naming it and the closest known name, sending nothing', async (_case, options, option, expected) => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await rejection(options as PayoutsCallOptions);

    expect(error).toBeInstanceOf(PayoutsCallOptionsError);
    expect(error).toMatchObject({ option });
    expect((error as Error).message).toBe(
      `Call option "${option}" is invalid: expected ${expected}. Nothing was sent.`,
    );
    expect(testbed.stub.requests).toHaveLength(0);
  });
});

describe('createPayout with an AbortSignal', () => {
  const testbed = usePayoutsTestbed();

  it('rejects with PayoutsAbortedError, sending nothing, when the signal has already aborted', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await testbed.started.payouts
      .createPayout(walletPayoutRequest('req_early'), { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsAbortedError);
    expect(error).toMatchObject({ requestId: 'req_early', method: 'POST', path: '/payouts' });
    expect((error as Error).message).toBe(
      'Payout request "req_early" (POST /payouts) was aborted by the caller before the payouts API could process it.',
    );
    expect(testbed.stub.requests).toHaveLength(0);
  });

  it('rejects with PayoutOutcomeUnknownError ABORTED when aborted while the request is under way', async () => {
    const controller = new AbortController();
    testbed.stub.handle(() => {
      controller.abort();
      return 'hang';
    });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);
    const { payouts } = testbed.started;

    const error = await payouts
      .createPayout(walletPayoutRequest('req_mid'), { signal: controller.signal })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(error).toMatchObject({ requestId: 'req_mid', code: 'ABORTED' });
    expect((error as Error).message).toContain('the call was aborted while the request was under way');
    await expect.poll(() => testbed.stub.connections[0]!.destroyed).toBe(true);
  });

  it('rejects with PayoutsAbortedError when aborted while waiting to retry a 503', async () => {
    const controller = new AbortController();
    // The abort comes with the warning that announces the wait: the reply has been read by then.
    class AbortingLogger extends RecordingLogger {
      override warn(...args: unknown[]): void {
        super.warn(...args);
        controller.abort();
      }
    }
    testbed.stub.reply({ status: 503, headers: { 'retry-after': '3600' }, body: {} });
    // A retry an hour away: the call can only settle through the abort.
    testbed.started = await startPayoutsAppFor(
      testbed.stub.baseUrl,
      { retries: { maxRetries: 1, maxDelayMs: 3_600_000 } },
      new AbortingLogger(),
    );

    const error = await testbed.started.payouts
      .createPayout(walletPayoutRequest('req_wait'), { signal: controller.signal })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsAbortedError);
    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('rejects with PayoutsAbortedError when aborted while the token function runs', async () => {
    const controller = new AbortController();
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, {
      accessToken: () => {
        controller.abort();
        return new Promise<string>(() => undefined);
      },
    });

    const error = await testbed.started.payouts
      .createPayout(walletPayoutRequest('req_token'), { signal: controller.signal })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsAbortedError);
    expect(testbed.stub.requests).toHaveLength(0);
  });
});
