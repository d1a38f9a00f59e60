import { isISO31661Alpha2, isISO4217CurrencyCode, isUppercase } from '../common/class-validator-files.js';
import { currencyFractionDigits, fractionDigitsOf } from './dto/currency-fraction-digits.js';
import { NOT_BLANK, PHONE_NUMBER, POSITIVE_DECIMAL, SNAKE_CASE } from './dto/payout-field-patterns.js';

/**
 * True only when the DTO classes would accept the request: the same rules, read straight off the
 * plain object instead of through class-transformer and class-validator, which cost far more per call.
 * False means "not sure" (invalid, or a shape such as a class instance that the DTOs treat their own
 * way), and the caller then asks the DTOs, so every rejection and its messages still come from them.
 */
export function isCertainlyValidPayoutRequest(request: unknown): boolean {
  if (!isPlainRecord(request)) return false;
  const method = field(request, 'payout_method');
  const amount = field(request, 'amount');
  return (
    isPlainRecord(method) &&
    (method['type'] === 'wallet' ? isValidWalletMethod(method) : isValidOtherMethod(method)) &&
    isPlainRecord(amount) &&
    isValidAmount(amount) &&
    isCapitalised(field(request, 'country_code'), isISO31661Alpha2) &&
    matches(field(request, 'purpose'), SNAKE_CASE) &&
    isNonEmptyString(field(request, 'reference')) &&
    matches(field(request, 'request_id'), NOT_BLANK)
  );
}

function isValidWalletMethod(method: Record<string, unknown>): boolean {
  const beneficiary = field(method, 'beneficiary');
  const details = isPlainRecord(beneficiary) ? field(beneficiary, 'payout_method_details') : undefined;
  return (
    field(method, 'type') === 'wallet' &&
    matches(field(method, 'payment_method'), SNAKE_CASE) &&
    isPlainRecord(beneficiary) &&
    isNonEmptyString(field(beneficiary, 'name')) &&
    isPlainRecord(details) &&
    matches(field(details, 'phone_number'), PHONE_NUMBER)
  );
}

function isValidOtherMethod(method: Record<string, unknown>): boolean {
  const beneficiary = field(method, 'beneficiary');
  return (
    isNonEmptyString(field(method, 'type')) &&
    isPlainRecord(beneficiary) &&
    isNonEmptyString(field(beneficiary, 'name'))
  );
}

function isValidAmount(amount: Record<string, unknown>): boolean {
  const value = field(amount, 'value');
  const currency = field(amount, 'currency_code');
  return (
    isCapitalised(currency, isISO4217CurrencyCode) &&
    matches(value, POSITIVE_DECIMAL) &&
    fractionDigitsOf(value) <= currencyFractionDigits(currency)
  );
}

/**
 * A plain object as written in code or parsed from JSON. class-transformer copies other objects
 * differently (class instances, `then`-ables, objects without `Object.prototype`), so those are left to it.
 */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    typeof (value as { then?: unknown }).then !== 'function'
  );
}

/** class-transformer copies only own enumerable properties, so an inherited or hidden one counts as missing. */
function field(record: Record<string, unknown>, name: string): unknown {
  return Object.prototype.propertyIsEnumerable.call(record, name) ? record[name] : undefined;
}

function matches(value: unknown, pattern: RegExp): value is string {
  return typeof value === 'string' && pattern.test(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isCapitalised(value: unknown, isKnownCode: (code: string) => boolean): value is string {
  return typeof value === 'string' && isUppercase(value) && isKnownCode(value);
}
