import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CreatePayoutRequest } from 'nestjs-payouts';
import { CREATED_PAYOUT } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { ACCESS_TOKEN, API_KEY, startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('PayoutsService.createPayout', () => {
  const testbed = usePayoutsTestbed();

  it('posts the exact JSON body with every header to {baseUrl}/payouts', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);
    const request = walletPayoutRequest();

    await testbed.started.payouts.createPayout(request);

    expect(testbed.stub.requests).toHaveLength(1);
    const [received] = testbed.stub.requests;
    expect(received!.method).toBe('POST');
    expect(received!.path).toBe('/payouts');
    expect(received!.body).toBe(JSON.stringify(request));
    expect(JSON.parse(received!.body)).toEqual({
      payout_method: {
        type: 'wallet',
        payment_method: 'mpesa_ke',
        beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: '254712345678' } },
      },
      amount: { value: '125.50', currency_code: 'KES' },
      country_code: 'KE',
      purpose: 'salary_payment',
      reference: 'Invoice 42 / March',
      request_id: 'req_0001',
    });
    expect(received!.headers).toMatchObject({
      'x-api-key': API_KEY,
      authorization: `Bearer ${ACCESS_TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': `nestjs-payouts/${version}`,
      'content-length': String(Buffer.byteLength(received!.body)),
    });
  });

  it('resolves with the status, headers and parsed body of the reply', async () => {
    testbed.stub.reply({ status: 201, headers: { 'x-trace-id': 'tr_9' }, body: { id: 'po_9', status: 'accepted' } });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const result = await testbed.started.payouts.createPayout(walletPayoutRequest());

    expect(result.status).toBe(201);
    expect(result.body).toEqual({ id: 'po_9', status: 'accepted' });
    expect(result.headers['x-trace-id']).toBe('tr_9');
    expect(result.headers['content-type']).toBe('application/json');
  });

  it('gives an empty body when a 2xx reply carries no JSON object', async () => {
    testbed.stub.reply({ status: 202, body: '' }, { status: 200, body: 'accepted' }, { status: 200, body: '[1,2]' });
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    for (const status of [202, 200, 200]) {
      const result = await testbed.started.payouts.createPayout(walletPayoutRequest());
      expect(result).toMatchObject({ status, body: {} });
    }
    expect(testbed.stub.requests).toHaveLength(3);
  });

  it('keeps the path of a base URL with a trailing slash', async () => {
    testbed.started = await startPayoutsAppFor(`${testbed.stub.baseUrl}/api/v1/`);

    await testbed.started.payouts.createPayout(walletPayoutRequest());

    expect(testbed.stub.requests.map(({ path }) => path)).toEqual(['/api/v1/payouts']);
  });

  it('sends a non-wallet method untouched, with fields the wallet shape does not have', async () => {
    interface BankTransferPayoutMethod {
      type: 'bank_transfer';
      beneficiary: { name: string; account: { iban: string; bic: string } };
      [field: string]: unknown;
    }
    const request: CreatePayoutRequest<BankTransferPayoutMethod> = {
      ...walletPayoutRequest('req_bank'),
      payout_method: {
        type: 'bank_transfer',
        beneficiary: { name: 'ACME Ltd', account: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' } },
        bank_hint: null,
      },
    };
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    await testbed.started.payouts.createPayout(request);

    expect(testbed.stub.requests[0]!.body).toBe(JSON.stringify(request));
  });

  it('sends extra top-level fields the caller adds, as given', async () => {
    const request = { ...walletPayoutRequest(), metadata: { order: 7 } };
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    await testbed.started.payouts.createPayout(request);

    expect(testbed.stub.requests[0]!.body).toBe(JSON.stringify(request));
  });

  it('works from a merchant endpoint of a listening Nest app', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    const response = await fetch(`${testbed.started.url}/merchant/payouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(walletPayoutRequest('req_http')),
    });

    expect(response.status).toBe(201);
    expect(await response.json()).toEqual(CREATED_PAYOUT);
    expect(JSON.parse(testbed.stub.requests[0]!.body)).toEqual(walletPayoutRequest('req_http'));
  });

  it('completes 200 concurrent payouts', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);
    const { payouts } = testbed.started;

    const results = await Promise.all(
      Array.from({ length: 200 }, (_, index) => payouts.createPayout(walletPayoutRequest(`req_${index}`))),
    );

    expect(results.every(({ status }) => status === 201)).toBe(true);
    const requestIds = testbed.stub.requests.map(({ body }) => (JSON.parse(body) as { request_id: string }).request_id);
    expect(new Set(requestIds).size).toBe(200);
  });

  it('reuses one kept-alive connection for payouts made one after another', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

    for (const requestId of ['req_a', 'req_b', 'req_c']) {
      await testbed.started.payouts.createPayout(walletPayoutRequest(requestId));
    }

    expect(testbed.stub.requests).toHaveLength(3);
    expect(testbed.stub.connections).toHaveLength(1);
  });

  it('closes its kept-alive connections when the app closes', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);
    await testbed.started.payouts.createPayout(walletPayoutRequest());
    const [socket] = testbed.stub.connections;
    const closed = new Promise<void>((resolve) => socket!.once('close', () => resolve()));

    await testbed.started.app.close();
    testbed.started = undefined;

    await closed;
    expect(socket!.destroyed).toBe(true);
  });
});
