import { afterEach, describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError, PayoutsApiError } from 'nestjs-payouts';
import { MockFault, MockPayoutsApi, type MockPayoutsApiOptions } from 'nestjs-payouts/testing';
import { RecordingLogger } from '../recording-logger.js';
import { errorRenderings } from '../payouts/error-renderings.js';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { ACCESS_TOKEN, API_KEY, type PayoutsTestApp, startPayoutsAppFor } from '../payouts/payouts-test-app.js';

/** A Nest app using PayoutsModule, calling createPayout() against the shipped mock over real HTTP. */
describe('createPayout() against MockPayoutsApi', () => {
  let mock: MockPayoutsApi;
  let started: PayoutsTestApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await started?.app.close();
    started = undefined;
    await mock.close();
  });

  async function startBoth(
    overrides: Parameters<typeof startPayoutsAppFor>[1] = {},
    mockOptions: MockPayoutsApiOptions = {},
  ): Promise<PayoutsTestApp> {
    logger = new RecordingLogger();
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN, ...mockOptions });
    started = await startPayoutsAppFor(mock.baseUrl, overrides, logger);
    return started;
  }

  it('creates the payout, sending both credentials and the body the mock validates', async () => {
    const { payouts } = await startBoth();

    const result = await payouts.createPayout(walletPayoutRequest('e2e-created'));

    expect(result.status).toBe(201);
    expect(result.body).toEqual(mock.payouts.get('e2e-created'));
    expect(mock.callsFor('e2e-created')).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/payouts',
        body: walletPayoutRequest('e2e-created'),
        credentials: { apiKey: 'valid', accessToken: 'valid' },
        status: 201,
        committed: true,
      }),
    ]);
  });

  it('retries a 503 with Retry-After, and the mock sees both attempts with the same request_id', async () => {
    const { payouts } = await startBoth();
    mock.fail({ times: 1, when: { requestId: 'e2e-503' } }, MockFault.unavailable(1));

    const result = await payouts.createPayout(walletPayoutRequest('e2e-503'));

    expect(result.status).toBe(201);
    expect(mock.callsFor('e2e-503').map((call) => [call.fault, call.status, call.committed])).toEqual([
      ['status', 503, false],
      [undefined, 201, true],
    ]);
    // payoutsOptions() caps every wait at 5 ms, below the mock's Retry-After of 1 s.
    expect(logger.messages('warn')).toEqual(['Payout request "e2e-503": HTTP 503, retry 1 of 2 in 5 ms']);
    mock.assertNoSecretIn(logger.lines);
  });

  it('surfaces a reset after the mock committed as PayoutOutcomeUnknownError, and does not send it again', async () => {
    const { payouts } = await startBoth();
    mock.fail({ times: 1, when: { requestId: 'e2e-reset' } }, MockFault.resetAfterCommit());

    const failure = await payouts.createPayout(walletPayoutRequest('e2e-reset')).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(failure).toMatchObject({ requestId: 'e2e-reset', code: 'ECONNRESET' });
    expect(mock.callsFor('e2e-reset')).toHaveLength(1);
    expect(mock.payouts.has('e2e-reset')).toBe(true);
    mock.assertNoSecretIn([...logger.lines, ...errorRenderings(failure)]);
  });

  it('creates the payout after a latency the client gave up on: the outcome the client reported unknown', async () => {
    // The client's deadline (100 ms) passes long before the mock handles the request (1.5 s later).
    const { payouts } = await startBoth({ timeoutMs: 100 });
    mock.fail({ times: 1 }, MockFault.latency(1500));

    const failure = await payouts.createPayout(walletPayoutRequest('e2e-late')).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(failure).toMatchObject({ requestId: 'e2e-late', code: 'ETIMEDOUT' });
    await expect.poll(() => mock.payouts.has('e2e-late'), { timeout: 15_000 }).toBe(true);
    expect(mock.callsFor('e2e-late')).toEqual([
      expect.objectContaining({ fault: 'latency', status: undefined, reset: false, committed: true }),
    ]);
  });

  it('fetches a fresh token after the mock answers 401 for an expired one, once', async () => {
    const tokens: string[] = [];
    const fetchToken = () => {
      tokens.push(`${ACCESS_TOKEN}-${tokens.length + 1}`);
      return tokens.at(-1)!;
    };
    const { payouts } = await startBoth(
      { accessToken: fetchToken },
      { accessToken: (token) => tokens.includes(token) },
    );
    mock.fail({ times: 1 }, MockFault.tokenExpired());

    const result = await payouts.createPayout(walletPayoutRequest('e2e-token'));

    expect(result.status).toBe(201);
    expect(tokens).toHaveLength(2);
    expect(mock.callsFor('e2e-token').map((call) => [call.fault, call.status])).toEqual([
      ['token-expired', 401],
      [undefined, 201],
    ]);
    expect(logger.messages('warn')).toEqual([
      'Payout request "e2e-token": HTTP 401, sending again with a fresh access token',
    ]);
    mock.assertNoSecretIn(logger.lines);
  });

  it('rejects with PayoutsApiError when the mock refuses the credentials', async () => {
    const { payouts } = await startBoth({ apiKey: 'another-api-key-0c4e' });

    const failure = await payouts.createPayout(walletPayoutRequest('e2e-401')).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(PayoutsApiError);
    expect(failure).toMatchObject({ status: 401, body: { error: 'invalid_api_key' } });
    expect(mock.callsFor('e2e-401')[0]?.credentials).toEqual({ apiKey: 'wrong', accessToken: 'valid' });
    mock.assertNoSecretIn([...logger.lines, ...errorRenderings(failure)]);
  });
});
