import { describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError } from 'nestjs-payouts';
import { PayoutsApiError } from 'nestjs-payouts';
import { PayoutsCallOptionsError } from 'nestjs-payouts';
import type { PayoutsApiRequest } from 'nestjs-payouts';
import { RecordingLogger } from '../recording-logger.js';
import { ACCESS_TOKEN, API_KEY, startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

interface Payout {
  id: string;
  status: string;
}

describe('PayoutsService.request, for endpoints createPayout does not cover', () => {
  const testbed = usePayoutsTestbed();

  async function start(overrides = {}, logger = new RecordingLogger()) {
    testbed.started = await startPayoutsAppFor(`${testbed.stub.baseUrl}/v1`, overrides, logger);
    return testbed.started.payouts;
  }

  it('sends a GET with the credentials, path parameters encoded, the query string, and no body', async () => {
    testbed.stub.reply({ status: 200, headers: { 'x-trace-id': 'tr_1' }, body: { id: 'po 1/2', status: 'paid' } });
    const payouts = await start();

    const response = await payouts.request<Payout>({
      method: 'GET',
      path: '/payouts/{id}',
      params: { id: 'po 1/2' },
      query: { expand: 'beneficiary', tag: ['a', 'b'], page: 2, archived: false, skipped: undefined },
    });

    expect(response).toEqual({
      status: 200,
      headers: expect.objectContaining({ 'x-trace-id': 'tr_1' }),
      body: { id: 'po 1/2', status: 'paid' },
    });
    const payout: Payout = response.body;
    expect(payout.status).toBe('paid');
    const [received] = testbed.stub.requests;
    expect(received).toMatchObject({
      method: 'GET',
      path: '/v1/payouts/po%201%2F2?expand=beneficiary&tag=a&tag=b&page=2&archived=false',
      body: '',
    });
    expect(received!.headers).toMatchObject({
      'x-api-key': API_KEY,
      authorization: `Bearer ${ACCESS_TOKEN}`,
      accept: 'application/json',
    });
    expect(received!.headers).not.toHaveProperty('content-type');
  });

  it('sends a body as JSON, and gives undefined for an empty reply and text for one that is not JSON', async () => {
    testbed.stub.reply(
      { status: 202, body: '' },
      { status: 200, headers: { 'content-type': 'text/plain' }, body: 'queued' },
    );
    const payouts = await start();
    const transfer = { request_id: 'req_bank', amount: { value: '10.00', currency_code: 'EUR' } };

    const empty = await payouts.request({
      method: 'POST',
      path: '/bank-transfers',
      body: transfer,
      requestId: 'req_bank',
    });
    const text = await payouts.request({ method: 'DELETE', path: '/payouts/po_1' });

    expect(empty).toMatchObject({ status: 202, body: undefined });
    expect(text).toMatchObject({ status: 200, body: 'queued' });
    expect(testbed.stub.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/bank-transfers',
      body: JSON.stringify(transfer),
    });
    expect(testbed.stub.requests[0]!.headers['content-type']).toBe('application/json');
  });

  it('names the method and the path, never the query, in PayoutsApiError', async () => {
    testbed.stub.reply({ status: 404, body: { error: 'not_found' } });
    const payouts = await start();

    const error = await payouts
      .request({
        method: 'GET',
        path: '/payouts/{id}',
        params: { id: 'po_9' },
        query: { signature: 'query-secret-55' },
      })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error).toMatchObject({
      status: 404,
      method: 'GET',
      path: '/v1/payouts/po_9',
      requestId: undefined,
      body: { error: 'not_found' },
    });
    expect((error as Error).message).toBe(
      'Request GET /v1/payouts/po_9 was rejected by the payouts API with HTTP 404.',
    );
  });

  it('names a call by its requestId when given', async () => {
    testbed.stub.reply({ status: 422, body: {} });
    const payouts = await start();

    const error = await payouts
      .request({ method: 'POST', path: '/bank-transfers', body: {}, requestId: 'req_b1' })
      .catch((e: unknown) => e);

    expect((error as Error).message).toBe(
      'Payout request "req_b1" (POST /v1/bank-transfers) was rejected by the payouts API with HTTP 422.',
    );
  });

  it('refreshes the token after a 401 and retries 429/503, as createPayout does', async () => {
    let issued = 0;
    testbed.stub.handle(({ headers }, index) =>
      headers.authorization === 'Bearer token-1'
        ? { status: 401, body: {} }
        : index < 2
          ? { status: 503, body: {} }
          : { status: 200, body: [{ id: 'po_1' }] },
    );
    const payouts = await start({ accessToken: () => `token-${++issued}` });

    const response = await payouts.request<Payout[]>({ method: 'GET', path: '/payouts' });

    expect(response.body).toEqual([{ id: 'po_1' }]);
    expect(testbed.stub.requests.map(({ headers }) => headers.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-2',
      'Bearer token-2',
    ]);
  });

  it('retries a GET whose reply was lost, since reading changes nothing', async () => {
    testbed.stub.reply('destroy', { status: 200, body: { id: 'po_1' } });
    const logger = new RecordingLogger();
    const payouts = await start({}, logger);

    await expect(payouts.request({ method: 'GET', path: '/payouts/po_1' })).resolves.toMatchObject({
      body: { id: 'po_1' },
    });

    expect(testbed.stub.requests).toHaveLength(2);
    expect(logger.messages('warn')).toEqual([
      expect.stringMatching(/^Request GET \/v1\/payouts\/po_1: ECONNRESET, retry 1 of 2 in \d+ ms$/),
    ]);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)('never retries a %s whose reply was lost', async (method) => {
    testbed.stub.reply('destroy', { status: 200, body: {} });
    const payouts = await start();

    const error = await payouts.request({ method, path: '/payouts/po_1', requestId: 'req_1' }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(error).toMatchObject({ code: 'ECONNRESET', method, path: '/v1/payouts/po_1', requestId: 'req_1' });
    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('applies the size cap, the deadline and redaction', async () => {
    testbed.stub.reply(
      { status: 200, body: { filler: 'x'.repeat(2000) } },
      { status: 400, body: { echoed: `Bearer ${ACCESS_TOKEN}`, key: API_KEY } },
      'hang',
    );
    const payouts = await start({ maxResponseBytes: 1000, timeoutMs: 200, retries: 0 });

    await expect(payouts.request({ method: 'GET', path: '/payouts' })).rejects.toMatchObject({
      name: 'PayoutOutcomeUnknownError',
      code: 'RESPONSE_TOO_LARGE',
    });
    await expect(payouts.request({ method: 'GET', path: '/payouts' })).rejects.toMatchObject({
      body: { echoed: 'Bearer [redacted]', key: '[redacted]' },
    });
    await expect(payouts.request({ method: 'GET', path: '/payouts' })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
  });

  it('follows no redirect', async () => {
    testbed.stub.reply({ status: 301, headers: { location: `${testbed.stub.baseUrl}/moved` } });
    const payouts = await start();

    await expect(payouts.request({ method: 'GET', path: '/payouts' })).rejects.toMatchObject({ status: 301 });

    expect(testbed.stub.requests.map(({ path }) => path)).toEqual(['/v1/payouts']);
  });

  it.each<[string, Partial<PayoutsApiRequest>, string]>([
    ['an unknown method', { method: 'TRACE' as 'GET' }, 'method'],
    ['a path without a leading slash', { path: 'payouts' }, 'path'],
    ['a full URL as the path', { path: 'https://elsewhere.example/payouts' }, 'path'],
    ['a path with a query string', { path: '/payouts?x=1' }, 'path'],
    ['a path leaving the base URL', { path: '/../admin' }, 'path'],
    ['a placeholder without a value', { path: '/payouts/{id}' }, 'params.id'],
    ['a parameter without a placeholder', { path: '/payouts', params: { id: 'po_1' } }, 'params.id'],
    ['an empty parameter', { path: '/payouts/{id}', params: { id: '' } }, 'params.id'],
    ['a query value that is an object', { query: { filter: { a: 1 } as unknown as string } }, 'query.filter'],
    ['a body JSON cannot carry', { method: 'POST', body: { amount: 10n } }, 'body'],
    ['a blank requestId', { requestId: ' ' }, 'requestId'],
    ['a credential header', { headers: { authorization: 'Bearer other' } }, 'headers.authorization'],
  ])('refuses %s with PayoutsCallOptionsError, sending nothing', async (_case, override, option) => {
    const payouts = await start();

    const error = await payouts
      .request({ method: 'GET', path: '/payouts', ...override } as PayoutsApiRequest)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsCallOptionsError);
    expect(error).toMatchObject({ option });
    expect(testbed.stub.requests).toHaveLength(0);
  });
});
