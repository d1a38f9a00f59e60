import { PayoutsError } from './payouts.error.js';

/**
 * Thrown while the application boots when `PayoutsModule` options are missing or malformed.
 * `option` is the dotted path of the offending option; the message never contains its value.
 */
export class PayoutsConfigError extends PayoutsError {
  constructor(
    readonly option: string,
    expected: string,
  ) {
    super(`PayoutsModule option "${option}" is invalid: expected ${expected}.`);
  }
}
