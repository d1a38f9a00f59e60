import { PayoutsError } from './payouts.error.js';

/**
 * The request may have reached the payouts API, but no complete reply arrived (timeout, connection lost, or a 2xx
 * reply that was too large or could not be read). The payout may exist: reconcile using `requestId`, and never
 * resend it under a new `request_id`.
 */
export class PayoutOutcomeUnknownError extends PayoutsError {
  constructor(
    readonly requestId: string,
    /**
     * `ETIMEDOUT` when no complete reply came in time, `RESPONSE_TOO_LARGE` when the reply was over
     * `maxResponseBytes`, otherwise the error code, such as `ECONNRESET`.
     */
    readonly code: string,
    /** The reply's status when its head arrived but its body did not arrive whole. */
    readonly status?: number,
    /** What went wrong with that reply's body, such as `larger than maxResponseBytes (1048576 bytes)`. */
    bodyCutShort?: string,
  ) {
    super(
      `Payout request "${requestId}" may or may not have been processed: ${describe(code, status, bodyCutShort)}. ` +
        `Check its outcome with request_id "${requestId}" before trying again.`,
    );
  }
}

function describe(code: string, status: number | undefined, bodyCutShort: string | undefined): string {
  if (status !== undefined) return `the reply (HTTP ${status}) was ${bodyCutShort ?? `cut off (${code})`}`;
  return code === 'ETIMEDOUT' ? 'no reply before the timeout' : `the connection failed after sending (${code})`;
}
