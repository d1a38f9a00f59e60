import { callSubject, type PayoutsCallTarget } from './payouts-call-target.js';
import { PayoutsError } from './payouts.error.js';

/**
 * The `accessToken` function threw, returned something other than a usable token, or did not return within the
 * attempt's deadline, so the request was not sent: safe to try again with the same `request_id`. The function's own
 * error is not attached: it may carry the credentials used to fetch the token. Log it inside the function if you
 * need it.
 */
export class PayoutsAccessTokenError extends PayoutsError {
  readonly method: string | undefined;
  readonly path: string | undefined;

  constructor(
    /** The payout's `request_id`; undefined for a `request()` call made without one. */
    readonly requestId: string | undefined,
    problem: string,
    target: PayoutsCallTarget = {},
  ) {
    super(`${callSubject(requestId, target)} was not sent: the accessToken function ${problem}.`);
    this.method = target.method;
    this.path = target.path;
  }
}
