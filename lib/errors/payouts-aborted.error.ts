import { callSubject, type PayoutsCallTarget } from './payouts-call-target.js';
import { PayoutsError } from './payouts.error.js';

/**
 * The caller's `AbortSignal` aborted the call at a point where nothing it sent can have been processed: before the
 * first attempt, or while waiting to retry one that surely was not. Safe to send again with the same `request_id`.
 * An abort while a request is under way is a `PayoutOutcomeUnknownError` with `code: 'ABORTED'` instead.
 */
export class PayoutsAbortedError extends PayoutsError {
  readonly method: string | undefined;
  readonly path: string | undefined;

  constructor(
    /** The payout's `request_id`; undefined for a `request()` call made without one. */
    readonly requestId: string | undefined,
    target: PayoutsCallTarget = {},
  ) {
    super(`${callSubject(requestId, target)} was aborted by the caller before the payouts API could process it.`);
    this.method = target.method;
    this.path = target.path;
  }
}
