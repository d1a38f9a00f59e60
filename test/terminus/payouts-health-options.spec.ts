import { describe, expect, it } from 'vitest';
import { resolvePayoutsHealthOptions } from '../../lib/terminus/payouts-health-options.js';

describe('the options of PayoutsHealthIndicator.check()', () => {
  it('fills in the defaults', () => {
    expect(resolvePayoutsHealthOptions()).toEqual({ account: undefined, timeoutMs: 1000, thresholds: {} });
  });

  it.each([
    [{ timeout: 500 }, 'timeout', 'a known option name (did you mean "timeoutMs"?)'],
    [{ timeoutMs: 0 }, 'timeoutMs', 'a whole number of ms from 1 to 60000'],
    [
      { thresholds: { payoutParked: 1 } },
      'thresholds.payoutParked',
      'a known option name (did you mean "payoutsParked"?)',
    ],
    [{ thresholds: { payoutsFailed: -1 } }, 'thresholds.payoutsFailed', 'a whole number from 0'],
    [{ account: 7 }, 'account', 'the name of a PayoutsModule registration'],
  ])(
    'refuses %j, naming the option, so that a mistyped threshold is never silently ignored',
    (options, option, expected) => {
      expect(() => resolvePayoutsHealthOptions(options as never)).toThrow(
        `PayoutsHealthIndicator option "${option}" is invalid: expected ${expected}.`,
      );
    },
  );
});
