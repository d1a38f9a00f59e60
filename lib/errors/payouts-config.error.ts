import { PayoutsError } from './payouts.error.js';

/**
 * Thrown while the application boots when `PayoutsModule` options (or the options of a class the package ships,
 * such as a dedupe store) are missing or malformed. `option` is the dotted path of the offending option; the message
 * never contains its value.
 */
export class PayoutsConfigError extends PayoutsError {
  constructor(
    readonly option: string,
    expected: string,
    /**
     * Whose option it is; `PayoutsModule` unless a class of the package was constructed directly, or a handler
     * method (`CardEvents.added`) for the options of its `@OnPaymentMethod…()` decorator.
     */
    owner = 'PayoutsModule',
  ) {
    super(`${owner} option "${option}" is invalid: expected ${expected}.`);
  }
}
