import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate, type ValidationError } from 'class-validator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PayoutValidationError } from 'nestjs-payouts';
import { OtherPayoutBeneficiaryDto } from 'nestjs-payouts';
import { OtherPayoutMethodDto } from 'nestjs-payouts';
import { PayoutAmountDto } from 'nestjs-payouts';
import { PayoutBeneficiaryDto } from 'nestjs-payouts';
import { PayoutRequestDto } from 'nestjs-payouts';
import { WalletPayoutDetailsDto } from 'nestjs-payouts';
import { WalletPayoutMethodDto } from 'nestjs-payouts';
import { isCertainlyValidPayoutRequest } from '../../lib/payouts/payout-request-fast-check.js';
import { validatePayoutRequest } from '../../lib/payouts/payout-request-validator.js';

/** Marks a field to leave out of the generated request. */
const MISSING = Symbol('missing');

/** The verdict of the DTOs alone, as paths with messages: what every request got before the fast check existed. */
async function dtoErrors(request: unknown): Promise<{ path: string; messages: string[] }[]> {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return [{ path: '', messages: ['the payout request must be an object'] }];
  }
  const errors = await validate(plainToInstance(PayoutRequestDto, request), {
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  const flatten = (error: ValidationError, parent: string): { path: string; messages: string[] }[] => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [{ path, messages: Object.values(error.constraints) }] : [];
    return [...own, ...(error.children ?? []).flatMap((child) => flatten(child, path))];
  };
  return errors.flatMap((error) => flatten(error, ''));
}

/** What `validatePayoutRequest` reports: `[]` when it accepts. */
async function reportedErrors(request: unknown): Promise<{ path: string; messages: string[] }[]> {
  try {
    await validatePayoutRequest(request);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(PayoutValidationError);
    return (error as PayoutValidationError).errors.map(({ path, messages }) => ({ path, messages }));
  }
}

/** Mostly `valid`, sometimes one of the `invalid` variants, so most requests break few rules or none. */
function mostly<T>(valid: fc.Arbitrary<T>, ...invalid: fc.Arbitrary<unknown>[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: valid, weight: 15 * invalid.length },
    ...invalid.map((arbitrary) => ({ arbitrary, weight: 1 })),
  );
}

const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constant(MISSING),
);
const notAnObject = fc.oneof(
  fc.constant(null),
  fc.constant(MISSING),
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.constant([]),
);
// No `constructor` key: class-transformer throws a TypeError on one inside data it has no class for.
const extraFields = fc.oneof(
  { arbitrary: fc.constant({}), weight: 4 },
  fc.dictionary(
    fc.string({ maxLength: 6 }).filter((key) => key !== 'constructor'),
    fc.jsonValue({ maxDepth: 2 }),
    { maxKeys: 3 },
  ),
  fc.constantFrom(JSON.parse('{"__proto__":{"type":"wallet","name":"x"},"then":1}') as object),
);

const snakeCase = mostly(
  fc.stringMatching(/^[a-z][a-z0-9]{0,5}(?:_[a-z0-9]{1,4}){0,2}$/),
  fc.constantFrom('MPesa', 'mobile-money', 'mobile__money', '_mpesa', 'mpesa_', '2pesa', 'mobile money', '', 'é'),
  fc.string({ maxLength: 8 }),
  notAString,
);
const nonEmptyText = mostly(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('', ' '), notAString);
const requestId = mostly(
  fc.stringMatching(/^req_[0-9a-z]{1,8}$/),
  fc.constantFrom('', ' ', '\t\n', '\u00a0'),
  notAString,
);
const phoneNumber = mostly(
  fc.stringMatching(/^\d{1,15}$/),
  fc.stringMatching(/^\d{16,18}$/),
  fc.constantFrom('', '+254712345678', '2547 1234', '0712-345678', '２５４', ' 254712345678'),
  notAString,
);
const countryCode = mostly(
  fc.constantFrom('KE', 'NG', 'GB', 'US', 'JP', 'KW', 'DE'),
  fc.constantFrom('ke', 'Ke', 'KEN', 'UK', 'XX', 'ZZ', '', 'K'),
  fc.stringMatching(/^[A-Z]{2}$/),
  notAString,
);
const currencyCode = mostly(
  fc.constantFrom('KES', 'JPY', 'EUR', 'KWD', 'USD', 'BHD', 'CLF', 'UGX'),
  fc.constantFrom('kes', 'Kes', 'eur', 'XYZ', 'EU', 'EURO', '', 'KES '),
  fc.stringMatching(/^[A-Z]{3}$/),
  notAString,
);
const amountValue = mostly(
  fc
    .tuple(fc.integer({ min: 0, max: 100_000 }), fc.option(fc.stringMatching(/^\d{1,4}$/)))
    .map(([whole, fraction]) => (fraction === null ? `${whole}` : `${whole}.${fraction}`)),
  fc.constantFrom('0', '0.0', '0.00', '00.5', '01', '-1', '-0.50', '1e3', '1,50', ' 1', '.5', '5.', '+5', 'NaN', ''),
  fc.integer({ min: 1, max: 1000 }),
  notAString,
);

/** A plain object of the generated fields (MISSING ones left out), after any extra fields. */
function record(extra: fc.Arbitrary<object>, fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  return fc.tuple(extra, fc.record(fields)).map(([extras, values]) => {
    const result: Record<string, unknown> = { ...extras };
    for (const [name, value] of Object.entries(values)) {
      if (value === MISSING) delete result[name];
      else result[name] = value;
    }
    return result;
  });
}

const walletMethod = record(extraFields, {
  type: mostly(fc.constant('wallet'), fc.constant(MISSING)),
  payment_method: snakeCase,
  beneficiary: mostly(
    record(extraFields, {
      name: nonEmptyText,
      payout_method_details: mostly(record(extraFields, { phone_number: phoneNumber }), notAnObject),
    }),
    notAnObject,
  ),
});
const otherMethod = record(extraFields, {
  type: mostly(fc.constantFrom('bank_transfer', 'Wallet', 'card', ' wallet'), fc.constant(''), notAString),
  beneficiary: mostly(record(extraFields, { name: nonEmptyText }), notAnObject),
  account_number: fc.oneof(fc.constant(MISSING), fc.string({ maxLength: 10 })),
});
const payoutRequest = record(extraFields, {
  payout_method: mostly(fc.oneof(walletMethod, otherMethod), notAnObject),
  amount: mostly(record(extraFields, { value: amountValue, currency_code: currencyCode }), notAnObject),
  country_code: countryCode,
  purpose: snakeCase,
  reference: nonEmptyText,
  request_id: requestId,
});
/** Shapes the DTOs treat their own way; the fast check must leave all of them to the DTOs. */
const unusualRequest = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  payoutRequest.map((request) => Object.assign(Object.create(null) as object, request)),
  payoutRequest.map((request) => Object.assign(new Map(), request)),
  payoutRequest.map((request) => Object.create(request as object) as unknown),
  payoutRequest.map((request) => [request]),
  // class-transformer copies only enumerable fields, so a hidden one is missing to the DTOs.
  fc
    .tuple(
      payoutRequest,
      fc.constantFrom('reference', 'payout_method.type', 'payout_method.beneficiary.name', 'amount.value'),
    )
    .map(([request, path]) => {
      const keys = path.split('.');
      const last = keys.pop()!;
      const parent = keys.reduce<unknown>((object, key) => (object as Record<string, unknown> | null)?.[key], request);
      if (typeof parent === 'object' && parent !== null && last in parent) {
        Object.defineProperty(parent, last, { enumerable: false });
      }
      return request;
    }),
  // class-transformer hands anything with a `then` method back unconverted, so the DTOs reject it.
  payoutRequest.map((request) =>
    // oxlint-disable-next-line unicorn/no-thenable
    Object.defineProperty(request as object, 'then', { value: () => undefined, enumerable: true }),
  ),
);

const RUNS = { numRuns: 5000, seed: 20_261_122 };

describe('fast check of payout requests against the DTOs', () => {
  it('generates valid requests and requests breaking each rule', async () => {
    const sample = fc.sample(payoutRequest, { numRuns: 1000, seed: RUNS.seed });
    const verdicts = await Promise.all(sample.map((request) => dtoErrors(request)));
    expect(verdicts.filter((errors) => errors.length === 0).length).toBeGreaterThan(100);
    const broken = new Set(
      verdicts.flat().flatMap(({ path, messages }) => messages.map((message) => `${path}: ${message}`)),
    );
    expect([...broken].sort()).toMatchInlineSnapshot(`
      [
        "amount.currency_code: currency_code is required",
        "amount.currency_code: currency_code must be a string",
        "amount.currency_code: currency_code must be an ISO 4217 currency code, such as "KES"",
        "amount.currency_code: currency_code must be in capitals",
        "amount.value: value is required",
        "amount.value: value must be a positive decimal string with a dot, such as "125.50"",
        "amount.value: value must be a string",
        "amount.value: value must be a whole number for JPY",
        "amount.value: value must be a whole number for UGX",
        "amount.value: value must have at most 2 decimals for EUR",
        "amount.value: value must have at most 2 decimals for KES",
        "amount.value: value must have at most 2 decimals for USD",
        "amount.value: value must have at most 3 decimals for BHD",
        "amount.value: value must have at most 3 decimals for KWD",
        "amount: amount is required",
        "amount: amount must be an object",
        "country_code: country_code is required",
        "country_code: country_code must be a string",
        "country_code: country_code must be an ISO 3166-1 alpha-2 country code, such as "KE"",
        "country_code: country_code must be in capitals",
        "payout_method.beneficiary.name: name is required",
        "payout_method.beneficiary.name: name must be a string",
        "payout_method.beneficiary.name: name should not be empty",
        "payout_method.beneficiary.payout_method_details.phone_number: phone_number is required",
        "payout_method.beneficiary.payout_method_details.phone_number: phone_number must be 1 to 15 digits, without "+" or spaces",
        "payout_method.beneficiary.payout_method_details.phone_number: phone_number must be a string",
        "payout_method.beneficiary.payout_method_details: payout_method_details is required",
        "payout_method.beneficiary.payout_method_details: payout_method_details must be an object",
        "payout_method.beneficiary: beneficiary is required",
        "payout_method.beneficiary: beneficiary must be an object",
        "payout_method.payment_method: payment_method is required",
        "payout_method.payment_method: payment_method must be a string",
        "payout_method.payment_method: payment_method must be lowercase snake_case, such as "salary_payment"",
        "payout_method.type: type is required",
        "payout_method.type: type must be a string",
        "payout_method.type: type should not be empty",
        "payout_method: payout_method is required",
        "payout_method: payout_method must be an object",
        "purpose: purpose is required",
        "purpose: purpose must be a string",
        "purpose: purpose must be lowercase snake_case, such as "salary_payment"",
        "reference: reference is required",
        "reference: reference must be a string",
        "reference: reference should not be empty",
        "request_id: request_id is required",
        "request_id: request_id must be a string",
        "request_id: request_id must not be empty or blank",
      ]
    `);
  });

  it('accepts exactly the plain requests the DTOs accept', async () => {
    await fc.assert(
      fc.asyncProperty(payoutRequest, async (request) => {
        expect(isCertainlyValidPayoutRequest(request)).toBe((await dtoErrors(request)).length === 0);
      }),
      RUNS,
    );
  });

  it('never accepts what the DTOs reject, whatever the shape', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(payoutRequest, unusualRequest), async (request) => {
        if (isCertainlyValidPayoutRequest(request)) {
          expect(await dtoErrors(request)).toEqual([]);
        }
      }),
      RUNS,
    );
  });

  it('leaves validatePayoutRequest reporting the same paths and messages as the DTOs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(payoutRequest, unusualRequest), async (request) => {
        expect(await reportedErrors(request)).toEqual(await dtoErrors(request));
      }),
      RUNS,
    );
  });

  it('reads a field named constructor as plain data, as class-transformer does for the DTO fields', async () => {
    const request = {
      constructor: 'Object',
      payout_method: {
        constructor: 'Object',
        type: 'bank_transfer',
        beneficiary: { name: 'Jane Doe', constructor: 'Object' },
        account: { constructor: 'Object', number: '12345678' },
      },
      amount: { value: '10', currency_code: 'JPY', constructor: 'Object' },
      country_code: 'JP',
      purpose: 'refund',
      reference: 'R-1',
      request_id: 'req_1',
    };
    expect(isCertainlyValidPayoutRequest(request)).toBe(true);
    await expect(validatePayoutRequest(request)).resolves.toBeUndefined();
    const { account: _, ...typedFieldsOnly } = request.payout_method;
    expect(await dtoErrors({ ...request, payout_method: typedFieldsOnly })).toEqual([]);
  });

  it('mirrors the rules the DTOs declare (a change to a DTO needs the same change to the fast check)', () => {
    const dtos = [
      PayoutRequestDto,
      WalletPayoutMethodDto,
      OtherPayoutMethodDto,
      PayoutBeneficiaryDto,
      OtherPayoutBeneficiaryDto,
      WalletPayoutDetailsDto,
      PayoutAmountDto,
    ];
    const rules = dtos.map((dto) => [
      dto.name,
      getMetadataStorage()
        .getTargetValidationMetadatas(dto, '', true, false)
        .map(({ propertyName, name, type, constraints }) =>
          [propertyName, name ?? type, ...(constraints ?? []).filter((constraint) => constraint !== undefined)].join(
            ' ',
          ),
        )
        .sort(),
    ]);
    expect(rules).toMatchInlineSnapshot(`
      [
        [
          "PayoutRequestDto",
          [
            "amount isDefined",
            "amount isObject",
            "amount nestedValidation",
            "country_code isDefined",
            "country_code isISO31661Alpha2",
            "country_code isString",
            "country_code isUppercase",
            "payout_method isDefined",
            "payout_method isObject",
            "payout_method nestedValidation",
            "purpose isDefined",
            "purpose isString",
            "purpose matches /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/",
            "reference isDefined",
            "reference isNotEmpty",
            "reference isString",
            "request_id isDefined",
            "request_id isString",
            "request_id matches /\\S/",
          ],
        ],
        [
          "WalletPayoutMethodDto",
          [
            "beneficiary isDefined",
            "beneficiary isObject",
            "beneficiary nestedValidation",
            "payment_method isDefined",
            "payment_method isString",
            "payment_method matches /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/",
            "type equals wallet",
            "type isDefined",
          ],
        ],
        [
          "OtherPayoutMethodDto",
          [
            "beneficiary isDefined",
            "beneficiary isObject",
            "beneficiary nestedValidation",
            "type isDefined",
            "type isNotEmpty",
            "type isString",
          ],
        ],
        [
          "PayoutBeneficiaryDto",
          [
            "name isDefined",
            "name isNotEmpty",
            "name isString",
            "payout_method_details isDefined",
            "payout_method_details isObject",
            "payout_method_details nestedValidation",
          ],
        ],
        [
          "OtherPayoutBeneficiaryDto",
          [
            "name isDefined",
            "name isNotEmpty",
            "name isString",
          ],
        ],
        [
          "WalletPayoutDetailsDto",
          [
            "phone_number isDefined",
            "phone_number isString",
            "phone_number matches /^\\d{1,15}$/",
          ],
        ],
        [
          "PayoutAmountDto",
          [
            "currency_code isDefined",
            "currency_code isISO4217CurrencyCode",
            "currency_code isString",
            "currency_code isUppercase",
            "value fitsCurrencyFractionDigits currency_code",
            "value isDefined",
            "value isString",
            "value matches /^(?=.*[1-9])(?:0|[1-9]\\d*)(?:\\.\\d+)?$/",
          ],
        ],
      ]
    `);
  });
});
