import { callSubject } from './payouts-call-target.js';
import { PayoutsError } from './payouts.error.js';

/**
 * A payout run was given a request under a `request_id` already used, within the dedupe window, for a different
 * body. Nothing was queued for it: the payout first queued under that `request_id` stays as it was. Choose a new
 * `request_id` for a different payout; send the very same body to have it recognised as already queued.
 */
export class PayoutRequestConflictError extends PayoutsError {
  constructor(readonly requestId: string) {
    super(
      `${callSubject(requestId, {})} was not queued: its request_id is already used for a different payout ` +
        'within the dedupe window, which stays as it was queued.',
    );
  }
}
