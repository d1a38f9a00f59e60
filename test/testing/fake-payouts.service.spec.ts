import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PayoutsApiError } from 'nestjs-payouts';
import { PayoutValidationError } from 'nestjs-payouts';
import { PayoutsModule, PayoutsService } from 'nestjs-payouts';
import type { CreatePayoutRequest } from 'nestjs-payouts';
import { FakePayoutsService } from 'nestjs-payouts/testing';

/** A user's business service, as the fake is meant to be tested with. */
@Injectable()
class SellerPayouts {
  constructor(private readonly payouts: PayoutsService) {}

  async payOut(sellerId: string, amount: string): Promise<string> {
    const result = await this.payouts.createPayout(walletPayout(sellerId, amount));
    return String(result.body.id);
  }
}

@Module({
  imports: [
    PayoutsModule.forRoot({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'test-api-key',
      accessToken: 'test-access-token',
      notifications: false,
    }),
  ],
  providers: [SellerPayouts],
})
class SellerPayoutsModule {}

function walletPayout(sellerId: string, amount: string): CreatePayoutRequest {
  return {
    payout_method: {
      type: 'wallet',
      payment_method: 'mpesa',
      beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: '254700000001' } },
    },
    amount: { value: amount, currency_code: 'KES' },
    country_code: 'KE',
    purpose: 'seller_earnings',
    reference: `earnings-${sellerId}`,
    request_id: `req-${sellerId}`,
  };
}

describe('FakePayoutsService', () => {
  let fake: FakePayoutsService;
  let moduleRef: TestingModule;

  beforeEach(async () => {
    fake = new FakePayoutsService();
    moduleRef = await Test.createTestingModule({ imports: [SellerPayoutsModule] })
      .overrideProvider(PayoutsService)
      .useValue(fake)
      .compile();
  });

  afterEach(async () => {
    await moduleRef.close();
  });

  it('replaces PayoutsService in a testing module, records each request and answers as scripted', async () => {
    fake.resolveNext({ status: 201, body: { id: 'po_1' } }).resolveNext({ body: { id: 'po_2' } });

    const sellerPayouts = moduleRef.get(SellerPayouts);

    await expect(sellerPayouts.payOut('s1', '10.00')).resolves.toBe('po_1');
    await expect(sellerPayouts.payOut('s2', '20.00')).resolves.toBe('po_2');
    await expect(sellerPayouts.payOut('s3', '30.00')).resolves.toBe('undefined');
    expect(fake.requests).toEqual([
      walletPayout('s1', '10.00'),
      walletPayout('s2', '20.00'),
      walletPayout('s3', '30.00'),
    ]);
  });

  it('answers an unscripted call with status 200 and an empty body', async () => {
    await expect(fake.createPayout(walletPayout('s1', '10.00'))).resolves.toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: {},
    });
  });

  it('rejects a call with the scripted error', async () => {
    const rejection = new PayoutsApiError(422, { error: 'insufficient_funds' }, 'req-s1');
    fake.rejectNext(rejection);

    await expect(moduleRef.get(SellerPayouts).payOut('s1', '10.00')).rejects.toBe(rejection);
    await expect(moduleRef.get(SellerPayouts).payOut('s1', '10.00')).resolves.toBe('undefined');
  });

  it('rejects an invalid request like the real service, records it, and keeps the script for the next call', async () => {
    fake.resolveNext({ body: { id: 'po_1' } });
    const invalid = walletPayout('s1', '10.5.0');

    const failure = fake.createPayout(invalid);

    await expect(failure).rejects.toBeInstanceOf(PayoutValidationError);
    await expect(failure).rejects.toMatchObject({ errors: [{ path: 'amount.value' }] });
    expect(fake.requests).toEqual([invalid]);
    await expect(fake.createPayout(walletPayout('s1', '10.50'))).resolves.toMatchObject({ body: { id: 'po_1' } });
  });

  it('keeps a copy of each request, not the caller-owned object', async () => {
    const request = walletPayout('s1', '10.00');
    await fake.createPayout(request);
    request.reference = 'changed';

    expect(fake.requests[0]?.reference).toBe('earnings-s1');
  });

  it('records request() calls without their signal and answers them from the same script', async () => {
    fake.resolveNext({ body: { id: 'po_1', status: 'paid' } }).rejectNext(new PayoutsApiError(404, {}, undefined));
    const signal = new AbortController().signal;

    await expect(
      fake.request({ method: 'GET', path: '/payouts/{id}', params: { id: 'po_1' }, signal }),
    ).resolves.toMatchObject({
      status: 200,
      body: { id: 'po_1', status: 'paid' },
    });
    await expect(fake.request({ method: 'GET', path: '/payouts/po_2' })).rejects.toMatchObject({ status: 404 });
    expect(fake.apiRequests).toEqual([
      { method: 'GET', path: '/payouts/{id}', params: { id: 'po_1' } },
      { method: 'GET', path: '/payouts/po_2' },
    ]);
    expect(fake.requests).toEqual([]);
  });

  it('returns a fresh result object on each call', async () => {
    const first = await fake.createPayout(walletPayout('s1', '10.00'));
    first.body.id = 'mutated';

    expect((await fake.createPayout(walletPayout('s1', '10.00'))).body).toEqual({});
  });

  it("takes the service's event listeners, which hear what a test emits and nothing else", async () => {
    const outcomes: string[] = [];
    const once: string[] = [];
    fake
      .on('response', (event) => outcomes.push(event.outcome))
      .once('notification', (event) => once.push(event.outcome));
    const response = {
      account: 'default',
      operation: 'create_payout',
      requestId: 'req_1',
      attempt: 1,
      method: 'POST',
      path: '/payouts',
      status: 503,
      errorCode: undefined,
      elapsedMs: 12.5,
      outcome: 'retrying',
    } as const;

    await fake.createPayout(walletPayout('s1', '10.00'));
    fake.emit('response', response);
    fake.emit('notification', {
      account: 'default',
      eventType: undefined,
      outcome: 'unauthorized',
      dedupe: undefined,
      elapsedMs: 1,
    });
    fake.emit('notification', {
      account: 'default',
      eventType: undefined,
      outcome: 'invalid',
      dedupe: undefined,
      elapsedMs: 1,
    });

    expect(outcomes).toEqual(['retrying']);
    expect(once).toEqual(['unauthorized']);
  });
});
