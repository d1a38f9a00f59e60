import { describe, expect, it } from 'vitest';
import { PayoutsApiError } from 'nestjs-payouts';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { ACCESS_TOKEN, startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

describe('access token', () => {
  const testbed = usePayoutsTestbed();

  /** A token function handing out `token-1`, `token-2`, … and counting its calls. */
  function tokenSource(): { fetch: () => Promise<string>; calls: () => number } {
    let calls = 0;
    return {
      fetch: async () => {
        calls += 1;
        await new Promise((resolve) => setImmediate(resolve));
        return `token-${calls}`;
      },
      calls: () => calls,
    };
  }

  /** The API accepts only `accepted`, answering 401 to any other token. */
  function acceptOnly(accepted: string): void {
    testbed.stub.handle(({ headers }) =>
      headers.authorization === `Bearer ${accepted}`
        ? { status: 201, body: { id: 'po_1' } }
        : { status: 401, body: { error: 'invalid_token' } },
    );
  }

  const authorizations = () => testbed.stub.requests.map(({ headers }) => headers.authorization);

  it('rejects a 401 at once when the token is a fixed string', async () => {
    acceptOnly('another-token');
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await testbed.started.payouts.createPayout(walletPayoutRequest('req_401')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error).toMatchObject({ status: 401, body: { error: 'invalid_token' }, requestId: 'req_401' });
    expect(authorizations()).toEqual([`Bearer ${ACCESS_TOKEN}`]);
  });

  it('calls the token function on first use and caches its token', async () => {
    const source = tokenSource();
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { accessToken: source.fetch });

    await testbed.started.payouts.createPayout(walletPayoutRequest('req_1'));
    await testbed.started.payouts.createPayout(walletPayoutRequest('req_2'));

    expect(source.calls()).toBe(1);
    expect(authorizations()).toEqual(['Bearer token-1', 'Bearer token-1']);
  });

  it('accepts a synchronous token function', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { accessToken: () => 'sync-token' });

    await testbed.started.payouts.createPayout(walletPayoutRequest());

    expect(authorizations()).toEqual(['Bearer sync-token']);
  });

  it('after a 401, fetches a fresh token and sends the same body again', async () => {
    const source = tokenSource();
    acceptOnly('token-2');
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { accessToken: source.fetch });

    const result = await testbed.started.payouts.createPayout(walletPayoutRequest('req_refresh'));

    expect(result.status).toBe(201);
    expect(source.calls()).toBe(2);
    expect(authorizations()).toEqual(['Bearer token-1', 'Bearer token-2']);
    expect(new Set(testbed.stub.requests.map(({ body }) => body))).toEqual(
      new Set([JSON.stringify(walletPayoutRequest('req_refresh'))]),
    );
  });

  it('rejects a second 401 with PayoutsApiError, after one refresh', async () => {
    const source = tokenSource();
    acceptOnly('never-issued');
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { accessToken: source.fetch });

    const error = await testbed.started.payouts
      .createPayout(walletPayoutRequest('req_denied'))
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error).toMatchObject({ status: 401, requestId: 'req_denied' });
    expect(source.calls()).toBe(2);
    expect(authorizations()).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('shares one refresh among 10 concurrent callers that all got a 401', async () => {
    const source = tokenSource();
    acceptOnly('token-1');
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { accessToken: source.fetch });
    await testbed.started.payouts.createPayout(walletPayoutRequest('req_first'));
    testbed.stub.requests.length = 0;
    // token-1 has expired: its 401s are held back until all ten callers have sent it.
    let releaseRefusals!: () => void;
    const allRefused = new Promise<void>((resolve) => (releaseRefusals = resolve));
    testbed.stub.handle(async ({ headers }) => {
      if (headers.authorization === 'Bearer token-2') return { status: 201, body: { id: 'po_1' } };
      if (testbed.stub.requests.length === 10) releaseRefusals();
      await allRefused;
      return { status: 401, body: { error: 'expired' } };
    });
    const { payouts } = testbed.started;

    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) => payouts.createPayout(walletPayoutRequest(`req_${index}`))),
    );

    expect(results.map(({ status }) => status)).toEqual(Array.from({ length: 10 }, () => 201));
    expect(source.calls()).toBe(2);
    expect(authorizations().slice(0, 10)).toEqual(Array.from({ length: 10 }, () => 'Bearer token-1'));
    expect(authorizations().slice(10)).toEqual(Array.from({ length: 10 }, () => 'Bearer token-2'));
  });
});
