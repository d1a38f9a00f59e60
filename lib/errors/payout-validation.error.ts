import { PayoutsError } from './payouts.error.js';

/** One invalid field of a payout request: its dotted path on the wire and what is wrong with it. */
export interface PayoutFieldError {
  /** For example `payout_method.beneficiary.payout_method_details.phone_number`; `''` for the request itself. */
  readonly path: string;
  readonly messages: string[];
}

/** The payout request was rejected before sending: nothing went to the payouts API. */
export class PayoutValidationError extends PayoutsError {
  constructor(readonly errors: PayoutFieldError[]) {
    super(
      `Invalid payout request: ${errors.map(({ path, messages }) => `${path || 'request'} (${messages.join('; ')})`).join(', ')}.`,
    );
  }
}
