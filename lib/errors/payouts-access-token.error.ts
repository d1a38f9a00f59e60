import { PayoutsError } from './payouts.error.js';

/**
 * The `accessToken` function threw or returned something other than a usable token, so the payout
 * request was not sent. The function's own error is not attached: it may carry the credentials
 * used to fetch the token. Log it inside the function if you need it.
 */
export class PayoutsAccessTokenError extends PayoutsError {
  constructor(
    readonly requestId: string,
    problem: string,
  ) {
    super(`Payout request "${requestId}" was not sent: the accessToken function ${problem}.`);
  }
}
