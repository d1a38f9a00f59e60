import { PayoutsError } from './payouts.error.js';

/**
 * No connection to the payouts API could be made (refused, DNS failure, unreachable),
 * so the request was surely not sent and no payout was created. Safe to try again with the same `request_id`.
 */
export class PayoutsNetworkError extends PayoutsError {
  constructor(
    readonly requestId: string,
    /** The system error code, such as `ECONNREFUSED` or `ENOTFOUND`. */
    readonly code: string,
  ) {
    super(`Payout request "${requestId}" was not sent: could not connect to the payouts API (${code}).`);
  }
}
