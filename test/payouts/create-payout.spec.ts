import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CreatePayoutRequest } from '../../lib/payouts/create-payout-request.interface.js';
import { CREATED_PAYOUT, PayoutsApiStub } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { ACCESS_TOKEN, API_KEY, type PayoutsTestApp, startPayoutsAppFor } from './payouts-test-app.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('PayoutsService.createPayout', () => {
  let stub: PayoutsApiStub;
  let started: PayoutsTestApp | undefined;

  beforeEach(async () => {
    stub = await PayoutsApiStub.start();
  });

  afterEach(async () => {
    await started?.app.close();
    started = undefined;
    await stub.close();
  });

  it('posts the exact JSON body with every header to {baseUrl}/payouts', async () => {
    started = await startPayoutsAppFor(stub.baseUrl);
    const request = walletPayoutRequest();

    await started.payouts.createPayout(request);

    expect(stub.requests).toHaveLength(1);
    const [received] = stub.requests;
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
    stub.reply({ status: 201, headers: { 'x-trace-id': 'tr_9' }, body: { id: 'po_9', status: 'accepted' } });
    started = await startPayoutsAppFor(stub.baseUrl);

    const result = await started.payouts.createPayout(walletPayoutRequest());

    expect(result.status).toBe(201);
    expect(result.body).toEqual({ id: 'po_9', status: 'accepted' });
    expect(result.headers['x-trace-id']).toBe('tr_9');
    expect(result.headers['content-type']).toBe('application/json');
  });

  it('gives an empty body when a 2xx reply carries no JSON object', async () => {
    stub.reply({ status: 202, body: '' }, { status: 200, body: 'accepted' }, { status: 200, body: '[1,2]' });
    started = await startPayoutsAppFor(stub.baseUrl);

    for (const status of [202, 200, 200]) {
      const result = await started.payouts.createPayout(walletPayoutRequest());
      expect(result).toMatchObject({ status, body: {} });
    }
    expect(stub.requests).toHaveLength(3);
  });

  it('keeps the path of a base URL with a trailing slash', async () => {
    started = await startPayoutsAppFor(`${stub.baseUrl}/api/v1/`);

    await started.payouts.createPayout(walletPayoutRequest());

    expect(stub.requests.map(({ path }) => path)).toEqual(['/api/v1/payouts']);
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
    started = await startPayoutsAppFor(stub.baseUrl);

    await started.payouts.createPayout(request);

    expect(stub.requests[0]!.body).toBe(JSON.stringify(request));
  });

  it('sends extra top-level fields the caller adds, as given', async () => {
    const request = { ...walletPayoutRequest(), metadata: { order: 7 } };
    started = await startPayoutsAppFor(stub.baseUrl);

    await started.payouts.createPayout(request);

    expect(stub.requests[0]!.body).toBe(JSON.stringify(request));
  });

  it('works from a merchant endpoint of a listening Nest app', async () => {
    started = await startPayoutsAppFor(stub.baseUrl);

    const response = await fetch(`${started.url}/merchant/payouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(walletPayoutRequest('req_http')),
    });

    expect(response.status).toBe(201);
    expect(await response.json()).toEqual(CREATED_PAYOUT);
    expect(JSON.parse(stub.requests[0]!.body)).toEqual(walletPayoutRequest('req_http'));
  });

  it('completes 200 concurrent payouts', async () => {
    started = await startPayoutsAppFor(stub.baseUrl);
    const { payouts } = started;

    const results = await Promise.all(
      Array.from({ length: 200 }, (_, index) => payouts.createPayout(walletPayoutRequest(`req_${index}`))),
    );

    expect(results.every(({ status }) => status === 201)).toBe(true);
    const requestIds = stub.requests.map(({ body }) => (JSON.parse(body) as { request_id: string }).request_id);
    expect(new Set(requestIds).size).toBe(200);
  });

  it('reuses one kept-alive connection for payouts made one after another', async () => {
    started = await startPayoutsAppFor(stub.baseUrl);

    for (const requestId of ['req_a', 'req_b', 'req_c']) {
      await started.payouts.createPayout(walletPayoutRequest(requestId));
    }

    expect(stub.requests).toHaveLength(3);
    expect(stub.connections).toHaveLength(1);
  });

  it('closes its kept-alive connections when the app closes', async () => {
    started = await startPayoutsAppFor(stub.baseUrl);
    await started.payouts.createPayout(walletPayoutRequest());
    const [socket] = stub.connections;
    const closed = new Promise<void>((resolve) => socket!.once('close', () => resolve()));

    await started.app.close();
    started = undefined;

    await closed;
    expect(socket!.destroyed).toBe(true);
  });
});
