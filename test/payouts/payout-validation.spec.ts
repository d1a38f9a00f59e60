import { Body, Controller, Module, Post, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PayoutValidationError } from 'nestjs-payouts';
import { PayoutsError } from 'nestjs-payouts';
import type { CreatePayoutRequest } from 'nestjs-payouts';
import { PayoutRequestDto } from 'nestjs-payouts';
import { PayoutsApiStub } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { type PayoutsTestApp, startPayoutsAppFor } from './payouts-test-app.js';

/** The fixture with the field at a dotted path replaced (`undefined` removes it). */
function withField(path: string, value: unknown): Record<string, unknown> {
  const request = structuredClone(walletPayoutRequest()) as unknown as Record<string, unknown>;
  const keys = path.split('.');
  const last = keys.pop()!;
  const parent = keys.reduce((object, key) => object[key] as Record<string, unknown>, request);
  if (value === undefined) {
    delete parent[last];
  } else {
    parent[last] = value;
  }
  return request;
}

describe('payout request validation', () => {
  let stub: PayoutsApiStub;
  let started: PayoutsTestApp;

  beforeAll(async () => {
    stub = await PayoutsApiStub.start();
    started = await startPayoutsAppFor(stub.baseUrl);
  });

  afterAll(async () => {
    await started.app.close();
    await stub.close();
  });

  afterEach(() => {
    stub.requests.length = 0;
  });

  /** Expects a rejection that sent nothing, and returns the reported field errors. */
  async function validationErrors(request: unknown): Promise<PayoutValidationError['errors']> {
    const error = await started.payouts.createPayout(request as PayoutRequestDto).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    expect(error).toBeInstanceOf(PayoutValidationError);
    expect(error).toBeInstanceOf(PayoutsError);
    expect(stub.requests).toHaveLength(0);
    return (error as PayoutValidationError).errors;
  }

  async function expectRejected(path: string, value: unknown): Promise<void> {
    const errors = await validationErrors(withField(path, value));
    expect(errors.map((error) => error.path)).toEqual([path]);
    expect(errors[0]!.messages.length).toBeGreaterThan(0);
  }

  async function expectAccepted(path: string, value: unknown): Promise<void> {
    const request = withField(path, value);
    await expect(started.payouts.createPayout(request as unknown as PayoutRequestDto)).resolves.toMatchObject({
      status: 201,
    });
    expect(stub.requests.map(({ body }) => body)).toEqual([JSON.stringify(request)]);
    stub.requests.length = 0;
  }

  it('accepts the spec sample', async () => {
    await expectAccepted('reference', 'Invoice 42 / March');
  });

  it('lists every missing field of an empty request', async () => {
    const errors = await validationErrors({});
    expect(errors).toEqual([
      { path: 'payout_method', messages: ['payout_method is required'] },
      { path: 'amount', messages: ['amount is required'] },
      { path: 'country_code', messages: ['country_code is required'] },
      { path: 'purpose', messages: ['purpose is required'] },
      { path: 'reference', messages: ['reference is required'] },
      { path: 'request_id', messages: ['request_id is required'] },
    ]);
  });

  it('lists every failing nested path at once, dotted as on the wire', async () => {
    const errors = await validationErrors({
      payout_method: { type: 'wallet', payment_method: 'M-Pesa', beneficiary: { payout_method_details: {} } },
      amount: { value: '10.001', currency_code: 'usd' },
      country_code: 'KE',
      purpose: 'salary_payment',
      reference: 'r',
      request_id: 'req_1',
    });
    expect(errors.map((error) => error.path)).toEqual([
      'payout_method.payment_method',
      'payout_method.beneficiary.name',
      'payout_method.beneficiary.payout_method_details.phone_number',
      'amount.currency_code',
    ]);
    expect(errors[2]!.messages).toEqual(['phone_number is required']);
  });

  it.each([null, 'payout', 42, [walletPayoutRequest()]])(
    'rejects a request that is not an object: %j',
    async (request) => {
      expect(await validationErrors(request)).toEqual([
        { path: '', messages: ['the payout request must be an object'] },
      ]);
    },
  );

  it.each([
    ['payout_method', 'wallet'],
    ['payout_method', null],
    ['amount', '125.50'],
    ['payout_method.beneficiary', 'Jane'],
    ['payout_method.beneficiary.payout_method_details', '254712345678'],
  ])('rejects %s when it is not an object (%j)', expectRejected);

  describe('payout_method.payment_method and purpose: lowercase snake_case', () => {
    it.each(['mpesa', 'mobile_money', 'm_pesa2', 'a1_b2_c3'])('accepts %j', async (value) => {
      await expectAccepted('payout_method.payment_method', value);
      await expectAccepted('purpose', value);
    });
    it.each(['MPesa', 'mobile-money', 'mobile__money', '_mpesa', 'mpesa_', '2pesa', 'mobile money', '', 7])(
      'rejects %j',
      async (value) => {
        await expectRejected('payout_method.payment_method', value);
        await expectRejected('purpose', value);
      },
    );
    it('requires both', async () => {
      await expectRejected('payout_method.payment_method', undefined);
      await expectRejected('purpose', undefined);
    });
  });

  describe('payout_method.beneficiary.name', () => {
    it('accepts free text', async () => {
      await expectAccepted('payout_method.beneficiary.name', 'Ngozi Okonjo-Iweala, Jr.');
    });
    it.each([undefined, '', 42])('rejects %j', async (value) => {
      await expectRejected('payout_method.beneficiary.name', value);
    });
  });

  describe('payout_method.beneficiary.payout_method_details.phone_number: digits only, at most 15', () => {
    const path = 'payout_method.beneficiary.payout_method_details.phone_number';
    it.each(['1', '254712345678', '123456789012345'])('accepts %j', async (value) => {
      await expectAccepted(path, value);
    });
    it.each([undefined, '', '+254712345678', '2547 1234', '0712-345678', '1234567890123456', '２５４', 254712345678])(
      'rejects %j',
      async (value) => {
        await expectRejected(path, value);
      },
    );
  });

  describe('amount.value: positive decimal string with a dot, within the currency decimals', () => {
    it.each([
      ['125.50', 'KES'],
      ['5', 'USD'],
      ['0.01', 'USD'],
      ['0.5', 'EUR'],
      ['1200.00', 'EUR'],
      ['500', 'JPY'],
      ['1.125', 'KWD'],
    ])('accepts %j in %s', async (value, currency) => {
      const request = withField('amount', { value, currency_code: currency });
      await expect(started.payouts.createPayout(request as unknown as PayoutRequestDto)).resolves.toMatchObject({
        status: 201,
      });
    });
    it.each([undefined, '0', '0.00', '-5.00', '12,50', '1e3', '.5', '5.', ' 5.00', '007.50', 'NaN', '', 125.5])(
      'rejects %j',
      async (value) => {
        await expectRejected('amount.value', value);
      },
    );
    it.each([
      ['1.234', 'USD', 'value must have at most 2 decimals for USD'],
      ['1.5', 'JPY', 'value must be a whole number for JPY'],
      ['1.1250', 'KWD', 'value must have at most 3 decimals for KWD'],
    ])('rejects %j in %s for having too many decimals', async (value, currency, message) => {
      const errors = await validationErrors(withField('amount', { value, currency_code: currency }));
      expect(errors).toEqual([{ path: 'amount.value', messages: [message] }]);
    });
  });

  describe('amount.currency_code: ISO 4217 in capitals', () => {
    it.each(['USD', 'KES', 'JPY', 'XOF'])('accepts %j', async (value) => {
      await expectAccepted('amount', { value: '125', currency_code: value });
    });
    it.each([undefined, 'usd', 'ABC', 'US', 'EURO', '', 840])('rejects %j', async (value) => {
      await expectRejected('amount.currency_code', value);
    });
  });

  describe('country_code: ISO 3166-1 alpha-2 in capitals', () => {
    it.each(['KE', 'US', 'NG'])('accepts %j', async (value) => {
      await expectAccepted('country_code', value);
    });
    it.each([undefined, 'ke', 'XX', 'KEN', 'K', '', 404])('rejects %j', async (value) => {
      await expectRejected('country_code', value);
    });
  });

  describe('reference: free text', () => {
    it.each(['Invoice #42 — März', 'x'])('accepts %j', async (value) => {
      await expectAccepted('reference', value);
    });
    it.each([undefined, '', 42])('rejects %j', async (value) => {
      await expectRejected('reference', value);
    });
  });

  describe('request_id: non-empty', () => {
    it.each(['req_1', 'a', '0b6f0c5e-2d4b-4f7e-9a51-1f3b8f0a9e11'])('accepts %j', async (value) => {
      await expectAccepted('request_id', value);
    });
    it.each([undefined, '', '   ', 12, null])('rejects %j', async (value) => {
      await expectRejected('request_id', value);
    });
  });

  describe('payout_method.type', () => {
    it.each([undefined, '', 3])('rejects %j', async (value) => {
      await expectRejected('payout_method.type', value);
    });
  });

  describe('other payout methods', () => {
    const bankTransfer = (beneficiary: Record<string, unknown>) => ({
      ...walletPayoutRequest(),
      payout_method: { type: 'bank_transfer', beneficiary, Anything: ['goes', 1] },
    });

    it('are checked only for type and beneficiary.name, and sent untouched', async () => {
      const request: CreatePayoutRequest = {
        ...walletPayoutRequest(),
        payout_method: {
          type: 'bank_transfer',
          beneficiary: { name: 'ACME Ltd', payout_method_details: { iban: 'DE89370400440532013000' } },
          Anything: ['goes', 1],
        },
      };
      await started.payouts.createPayout(request);
      expect(stub.requests.map(({ body }) => body)).toEqual([JSON.stringify(request)]);
    });

    it('report the invalid fields of a request whose pass-through data has a field named constructor', async () => {
      const request = {
        ...walletPayoutRequest(),
        payout_method: { type: 'bank_transfer', beneficiary: { name: 'ACME' }, account: { constructor: 'x' } },
        amount: { value: '-1', currency_code: 'EUR' },
      };
      const errors = await validationErrors(request);
      expect(errors.map((error) => error.path)).toEqual(['amount.value']);
    });

    it('still need a beneficiary name', async () => {
      const errors = await validationErrors(bankTransfer({ iban: 'DE89370400440532013000' }));
      expect(errors).toEqual([{ path: 'payout_method.beneficiary.name', messages: ['name is required'] }]);
    });

    it('still need a beneficiary object', async () => {
      const errors = await validationErrors({ ...walletPayoutRequest(), payout_method: { type: 'bank_transfer' } });
      expect(errors).toEqual([{ path: 'payout_method.beneficiary', messages: ['beneficiary is required'] }]);
    });

    it('do not relax the shared top-level rules', async () => {
      const errors = await validationErrors({
        ...bankTransfer({ name: 'ACME' }),
        amount: { value: '1', currency_code: 'usd' },
      });
      expect(errors.map(({ path }) => path)).toEqual(['amount.currency_code']);
    });
  });

  it('tells in its message which fields are invalid', async () => {
    const error = (await started.payouts
      .createPayout(withField('country_code', 'XX') as unknown as PayoutRequestDto)
      .catch((rejection: unknown) => rejection)) as Error;
    expect(error.message).toBe(
      'Invalid payout request: country_code (country_code must be an ISO 3166-1 alpha-2 country code, such as "KE").',
    );
  });
});

describe('PayoutRequestDto in an application ValidationPipe', () => {
  @Controller('merchant')
  class MerchantController {
    @Post('payout-requests')
    accept(@Body(new ValidationPipe()) request: PayoutRequestDto): { accepted: string } {
      return { accepted: request.request_id };
    }
  }

  @Module({ controllers: [MerchantController] })
  class MerchantModule {}

  it('validates a merchant endpoint body with the same rules', async () => {
    const app = await NestFactory.create(MerchantModule, { logger: false, abortOnError: false });
    try {
      await app.listen(0, '127.0.0.1');
      const url = `${await app.getUrl()}/merchant/payout-requests`;
      const post = (body: unknown) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

      const valid = await post(walletPayoutRequest('req_pipe'));
      expect(valid.status).toBe(201);
      expect(await valid.json()).toEqual({ accepted: 'req_pipe' });

      const invalid = await post(withField('payout_method.beneficiary.payout_method_details.phone_number', '+2547'));
      expect(invalid.status).toBe(400);
      expect(JSON.stringify(await invalid.json())).toContain('phone_number must be 1 to 15 digits');
    } finally {
      await app.close();
    }
  });
});
