import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import { isWholeNumber } from './whole-number.js';

/**
 * Reads an optional whole-number option at bootstrap: `fallback` when it is absent, otherwise a safe integer of at
 * least `min`; anything else fails with a `PayoutsConfigError` naming the option (and its owner, when not the module).
 */
export function wholeNumberOption(
  option: string,
  value: unknown,
  fallback: number,
  min: 0 | 1,
  unit?: string,
  owner?: string,
): number {
  if (value === undefined) return fallback;
  if (!isWholeNumber(value, min)) {
    const expected = min === 1 ? 'a positive whole number' : 'a whole number, 0 or more';
    throw new PayoutsConfigError(option, unit ? `${expected} of ${unit}` : expected, owner);
  }
  return value;
}

/**
 * Reads a whole-number option bounded on both sides at bootstrap: `fallback` when it is absent (with no fallback the
 * option is required), otherwise a safe integer from `min` to `max`; anything else fails with a `PayoutsConfigError`
 * naming the option and the range (and its owner, when not the module).
 */
export function wholeNumberInRange(
  option: string,
  value: unknown,
  fallback: number | undefined,
  min: number,
  max: number,
  owner?: string,
): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new PayoutsConfigError(option, `a whole number ${range}`, owner);
  }
  return value;
}
