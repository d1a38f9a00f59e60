import { PayoutsError } from './payouts.error.js';

/**
 * A per-call option (of `createPayout()` or `request()`) is malformed, so nothing was sent. A mistake in the
 * calling code: sending again unchanged fails the same way. `option` names it; the message never repeats its value.
 */
export class PayoutsCallOptionsError extends PayoutsError {
  constructor(
    /** The dotted path of the option, such as `timeoutMs` or `headers.authorization`. */
    readonly option: string,
    expected: string,
  ) {
    super(`Call option "${option}" is invalid: expected ${expected}. Nothing was sent.`);
  }
}
