import { quoted } from '../common/printable.js';
import { callSubject, type PayoutsCallTarget } from './payouts-call-target.js';
import { PayoutsError } from './payouts.error.js';

/** What a `PayoutOutcomeUnknownError` knows of the reply, when one began to arrive, and of the request. */
export interface PayoutOutcomeUnknownDetails extends PayoutsCallTarget {
  /** The reply's status when its head arrived but its body did not arrive whole. */
  status?: number;
  /** What went wrong with that reply's body, such as `larger than maxResponseBytes (1048576 bytes)`. */
  bodyCutShort?: string;
}

/**
 * The request may have reached the payouts API, but no complete reply arrived (timeout, connection lost, an abort
 * while it was under way, or a 2xx reply that was too large or could not be read). The payout may exist: reconcile
 * using `requestId`, and never resend it under a new `request_id`; only the identical request is safe to send again.
 */
export class PayoutOutcomeUnknownError extends PayoutsError {
  readonly status: number | undefined;
  readonly method: string | undefined;
  readonly path: string | undefined;

  constructor(
    /** The payout's `request_id`; undefined for a `request()` call made without one. */
    readonly requestId: string | undefined,
    /**
     * `ETIMEDOUT` when no complete reply came in time, `RESPONSE_TOO_LARGE` when the reply was over
     * `maxResponseBytes`, `ABORTED` when the caller's signal aborted it, otherwise the error code, such as
     * `ECONNRESET`.
     */
    readonly code: string,
    details: PayoutOutcomeUnknownDetails = {},
  ) {
    const check =
      requestId === undefined ? 'Check its outcome' : `Check its outcome with request_id ${quoted(requestId)}`;
    super(
      `${callSubject(requestId, details)} may or may not have been processed: ${describe(code, details)}. ` +
        `${check} before trying again.`,
    );
    this.status = details.status;
    this.method = details.method;
    this.path = details.path;
  }
}

function describe(code: string, { status, bodyCutShort }: PayoutOutcomeUnknownDetails): string {
  if (status !== undefined) return `the reply (HTTP ${status}) was ${bodyCutShort ?? `cut off (${code})`}`;
  if (code === 'ETIMEDOUT') return 'no reply before the timeout';
  if (code === 'ABORTED') return 'the call was aborted while the request was under way';
  return `the connection failed after sending (${code})`;
}
