import { PayoutsError } from './payouts.error.js';

/**
 * The request may have reached the payouts API, but no reply arrived (timeout, connection lost).
 * The payout may exist: reconcile using `requestId`, and never resend it under a new `request_id`.
 */
export class PayoutOutcomeUnknownError extends PayoutsError {
  constructor(
    readonly requestId: string,
    /** `ETIMEDOUT` when no reply came in time, otherwise the system error code, such as `ECONNRESET`. */
    readonly code: string,
  ) {
    super(
      `Payout request "${requestId}" may or may not have been processed: ${describe(code)}. ` +
        `Check its outcome with request_id "${requestId}" before trying again.`,
    );
  }
}

function describe(code: string): string {
  return code === 'ETIMEDOUT' ? 'no reply before the timeout' : `the connection failed after sending (${code})`;
}
