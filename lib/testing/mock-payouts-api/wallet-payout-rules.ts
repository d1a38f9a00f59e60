import { isJsonObject } from '../../common/json-object.js';

/** One rule of the spec's wallet payout body: a dotted field path and the test its value must pass. */
interface FieldRule {
  path: string;
  expected: string;
  test: (value: unknown) => boolean;
}

const isText = (value: unknown) => typeof value === 'string' && value.trim() !== '';
const matches = (pattern: RegExp) => (value: unknown) => typeof value === 'string' && pattern.test(value);
const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

const WALLET_PAYOUT_RULES: FieldRule[] = [
  { path: 'payout_method', expected: 'an object', test: isJsonObject },
  { path: 'payout_method.type', expected: '"wallet" (the only method the mock knows)', test: (v) => v === 'wallet' },
  { path: 'payout_method.payment_method', expected: 'a snake_case word', test: matches(SNAKE_CASE) },
  { path: 'payout_method.beneficiary', expected: 'an object', test: isJsonObject },
  { path: 'payout_method.beneficiary.name', expected: 'a non-empty string', test: isText },
  { path: 'payout_method.beneficiary.payout_method_details', expected: 'an object', test: isJsonObject },
  { path: 'payout_method.beneficiary.payout_method_details.phone_number', expected: 'digits', test: matches(/^\d+$/) },
  { path: 'amount', expected: 'an object', test: isJsonObject },
  { path: 'amount.value', expected: 'a decimal string such as "125.50"', test: matches(/^\d+(\.\d+)?$/) },
  { path: 'amount.currency_code', expected: 'a three-letter code', test: matches(/^[A-Z]{3}$/) },
  { path: 'country_code', expected: 'a two-letter code', test: matches(/^[A-Z]{2}$/) },
  { path: 'purpose', expected: 'a snake_case word', test: matches(SNAKE_CASE) },
  { path: 'reference', expected: 'a non-empty string', test: isText },
  { path: 'request_id', expected: 'a non-empty string', test: isText },
];

/**
 * What is wrong with a payout body by the spec's wallet sample, one line per field; empty when it is valid.
 * Written apart from the package's own validation, so that the mock API checks what the package really sends.
 */
export function findPayoutRequestProblems(body: unknown): string[] {
  if (!isJsonObject(body)) return ['the body must be a JSON object'];
  const problems: string[] = [];
  for (const rule of WALLET_PAYOUT_RULES) {
    const parent = rule.path.split('.').slice(0, -1).join('.');
    // A missing or invalid parent is reported once, not again for each of its fields.
    if (parent !== '' && !isJsonObject(valueAt(body, parent))) continue;
    if (!rule.test(valueAt(body, rule.path))) problems.push(`${rule.path}: expected ${rule.expected}`);
  }
  return problems;
}

function valueAt(body: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((value, key) => (isJsonObject(value) ? (value as Record<string, unknown>)[key] : undefined), body);
}
