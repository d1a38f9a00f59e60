import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import { isWholeNumber } from './whole-number.js';

/** The longest delay Node's timers keep, 2^31 - 1 ms (about 24.8 days): a longer one fires after 1 ms instead. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** A whole number of milliseconds, at least `min`, that a timer really waits. */
export function isTimerDelay(value: unknown, min: 0 | 1): value is number {
  return isWholeNumber(value, min) && value <= MAX_TIMER_DELAY_MS;
}

/** What a timer delay expects, in the words of its error. */
export function timerDelayExpected(min: 0 | 1): string {
  const whole = min === 1 ? 'a positive whole number' : 'a whole number, 0 or more,';
  return `${whole} of milliseconds up to ${MAX_TIMER_DELAY_MS} (about 24 days)`;
}

/** Reads an optional timer delay at bootstrap: `fallback` when absent, else a valid delay or a `PayoutsConfigError`. */
export function timerDelayOption(option: string, value: unknown, fallback: number, min: 0 | 1): number {
  if (value === undefined) return fallback;
  if (!isTimerDelay(value, min)) throw new PayoutsConfigError(option, timerDelayExpected(min));
  return value;
}
