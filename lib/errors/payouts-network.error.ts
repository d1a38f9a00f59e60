import { callSubject, type PayoutsCallTarget } from './payouts-call-target.js';
import { PayoutsError } from './payouts.error.js';

/**
 * No connection to the payouts API could be made (refused, DNS failure, unreachable, TLS certificate refused),
 * so the request was surely not sent and no payout was created. Safe to try again with the same `request_id`.
 */
export class PayoutsNetworkError extends PayoutsError {
  readonly method: string | undefined;
  readonly path: string | undefined;

  constructor(
    /** The payout's `request_id`; undefined for a `request()` call made without one. */
    readonly requestId: string | undefined,
    /** The system error code, such as `ECONNREFUSED` or `ENOTFOUND`. */
    readonly code: string,
    target: PayoutsCallTarget = {},
  ) {
    super(`${callSubject(requestId, target)} was not sent: could not connect to the payouts API (${code}).`);
    this.method = target.method;
    this.path = target.path;
  }
}
