import { describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError } from 'nestjs-payouts';
import { PayoutsAccessTokenError } from 'nestjs-payouts';
import { PayoutsApiError } from 'nestjs-payouts';
import { PayoutsNetworkError } from 'nestjs-payouts';
import { PayoutsError } from 'nestjs-payouts';
import { transportFailure } from '../../lib/payouts/transport-failure.js';
import { refusingBaseUrl } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error as Error,
  );
}

describe('createPayout errors', () => {
  const testbed = usePayoutsTestbed();

  it('rejects a non-2xx reply with PayoutsApiError carrying the status, JSON body and request_id', async () => {
    testbed.stub.reply({ status: 422, body: { error: 'insufficient_funds', detail: 'Balance too low' } });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest('req_422')));

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error).toBeInstanceOf(PayoutsError);
    expect(error).toMatchObject({
      name: 'PayoutsApiError',
      status: 422,
      body: { error: 'insufficient_funds', detail: 'Balance too low' },
      requestId: 'req_422',
      message: 'Payout request "req_422" (POST /payouts) was rejected by the payouts API with HTTP 422.',
      method: 'POST',
      path: '/payouts',
    });
    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('keeps a body that is not JSON as text', async () => {
    testbed.stub.reply({ status: 400, headers: { 'content-type': 'text/plain' }, body: 'Bad Request: amount' });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest()));

    expect(error).toMatchObject({ status: 400, body: 'Bad Request: amount' });
  });

  it('does not follow a redirect, which would carry the credentials elsewhere', async () => {
    testbed.stub.reply({ status: 307, headers: { location: `${testbed.stub.baseUrl}/elsewhere` }, body: '' });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest()));

    expect(error).toMatchObject({ name: 'PayoutsApiError', status: 307 });
    expect(testbed.stub.requests.map(({ path }) => path)).toEqual(['/payouts']);
  });

  it('does not retry a 500, whose outcome the caller must check', async () => {
    testbed.stub.reply({ status: 500, body: { error: 'internal' } });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest()));

    expect(error).toMatchObject({ name: 'PayoutsApiError', status: 500 });
    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('rejects with PayoutsNetworkError when the connection is refused', async () => {
    testbed.started = await startPayoutsAppFor(await refusingBaseUrl(), { retries: 0 });

    const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest('req_refused')));

    expect(error).toBeInstanceOf(PayoutsNetworkError);
    expect(error).toBeInstanceOf(PayoutsError);
    expect(error).toMatchObject({ requestId: 'req_refused', code: 'ECONNREFUSED' });
    expect(error.message).toBe(
      'Payout request "req_refused" (POST /payouts) was not sent: could not connect to the payouts API (ECONNREFUSED).',
    );
    expect(error.cause).toBeUndefined();
  });

  it('rejects with PayoutOutcomeUnknownError when no reply comes before the timeout', async () => {
    testbed.stub.reply('hang');
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { timeoutMs: 100 });

    const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest('req_slow')));

    expect(error).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(error).toBeInstanceOf(PayoutsError);
    expect(error).toMatchObject({ requestId: 'req_slow', code: 'ETIMEDOUT' });
    expect(error.message).toContain('request_id "req_slow"');
    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('rejects with PayoutOutcomeUnknownError when the connection drops after sending', async () => {
    testbed.stub.reply('destroy');
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest('req_dropped')));

    expect(error).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(error).toMatchObject({ requestId: 'req_dropped', code: 'ECONNRESET' });
    expect(error.cause).toBeUndefined();
    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('rejects with PayoutsAccessTokenError, sending nothing, when the token function throws', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, {
      accessToken: () => Promise.reject(new TypeError('token endpoint unreachable')),
    });

    const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest('req_token')));

    expect(error).toBeInstanceOf(PayoutsAccessTokenError);
    expect(error).toBeInstanceOf(PayoutsError);
    expect(error).toMatchObject({ requestId: 'req_token' });
    expect(error.message).toBe(
      'Payout request "req_token" (POST /payouts) was not sent: the accessToken function threw TypeError.',
    );
    expect(error.cause).toBeUndefined();
    expect(testbed.stub.requests).toHaveLength(0);
  });

  it.each([[''], ['Bearer abc'], ['abc\n'], [undefined], [42]])(
    'rejects with PayoutsAccessTokenError when the token function returns %j',
    async (token) => {
      testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { accessToken: () => token as string });

      const error = await rejection(testbed.started.payouts.createPayout(walletPayoutRequest()));

      expect(error).toBeInstanceOf(PayoutsAccessTokenError);
      expect(error.message).toContain('returned no usable token');
      expect(testbed.stub.requests).toHaveLength(0);
    },
  );
});

describe('PayoutsApiError built by hand, as a test double rejects with it', () => {
  it('counts the size of the body it is given, as text or as JSON', () => {
    expect(new PayoutsApiError(422, { error: 'déjà' }, 'req_1')).toMatchObject({
      bodyLength: 18,
      bodyTruncated: false,
    });
    expect(new PayoutsApiError(500, 'oops', undefined).bodyLength).toBe(4);
    expect(new PayoutsApiError(404, undefined, undefined).bodyLength).toBe(0);
  });
});

describe('transportFailure', () => {
  it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'CERT_HAS_EXPIRED'])(
    'counts %s as surely not sent',
    (code) => {
      const failure = transportFailure(Object.assign(new Error('connect failed'), { code }), 'req_1');
      expect(failure).toBeInstanceOf(PayoutsNetworkError);
      expect(failure).toMatchObject({ code, requestId: 'req_1' });
    },
  );

  it.each(['ETIMEDOUT', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_BAD_RESPONSE'])(
    'counts %s as possibly processed',
    (code) => {
      const failure = transportFailure(Object.assign(new Error('failed'), { code }), 'req_1');
      expect(failure).toBeInstanceOf(PayoutOutcomeUnknownError);
      expect(failure).toMatchObject({ code, requestId: 'req_1' });
    },
  );

  it.each([new Error('no code'), 'a string', null, { code: 'not a code' }])(
    'counts %j as possibly processed',
    (error) => {
      expect(transportFailure(error, 'req_1')).toMatchObject({ name: 'PayoutOutcomeUnknownError', code: 'UNKNOWN' });
    },
  );
});
