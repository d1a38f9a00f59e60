import { PayoutsConfigError } from '../errors/payouts-config.error.js';

/**
 * Reads an optional whole-number option at bootstrap: `fallback` when it is absent, otherwise a safe integer of at
 * least `min`; anything else fails with a `PayoutsConfigError` naming the option.
 */
export function wholeNumberOption(option: string, value: unknown, fallback: number, min: 0 | 1, unit?: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    const expected = min === 1 ? 'a positive whole number' : 'a whole number, 0 or more';
    throw new PayoutsConfigError(option, unit ? `${expected} of ${unit}` : expected);
  }
  return value;
}
