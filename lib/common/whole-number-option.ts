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
