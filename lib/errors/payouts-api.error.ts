import { callSubject, type PayoutsCallTarget } from './payouts-call-target.js';
import { PayoutsError } from './payouts.error.js';

/** What a `PayoutsApiError` keeps of the reply and the request besides the status and body. */
export interface PayoutsApiErrorDetails extends PayoutsCallTarget {
  /** Response headers, names in lowercase, credentials redacted. */
  headers?: Record<string, string>;
  /**
   * Why the body is incomplete, such as `larger than maxResponseBytes (1048576 bytes)`; absent when it arrived whole.
   * An incomplete body is kept as the text that arrived, never parsed.
   */
  bodyCutShort?: string;
  /** Whether `body` is less than the whole reply body; by default, whether it was cut short. */
  bodyTruncated?: boolean;
  /** The size of the reply body in bytes, as received (after decoding); by default, the size of `body`. */
  bodyLength?: number;
}

/**
 * The payouts API answered with a non-2xx status (after any retries the policy allows).
 * `body` is the parsed JSON reply, or its text when it is not JSON, arrived incomplete or is longer than the 4,096
 * characters kept; the API key, the access token and a proxy's credentials are replaced with `[redacted]` wherever
 * the reply echoed them. Whether sending again is safe depends on the status: `429`/`503` were not processed, other
 * 4xx were refused, other 5xx may have been processed.
 */
export class PayoutsApiError extends PayoutsError {
  readonly headers: Record<string, string>;
  /**
   * True when `body` is not the whole reply body: it did not arrive whole (too large, too slow or cut off), or it is
   * longer than the 4,096 characters kept. `body` is then the text's first part.
   */
  readonly bodyTruncated: boolean;
  /** The size of the reply body in bytes as received (after decoding), however little of it `body` keeps. */
  readonly bodyLength: number;
  readonly method: string | undefined;
  readonly path: string | undefined;

  constructor(
    readonly status: number,
    readonly body: unknown,
    /** The payout's `request_id`; undefined for a `request()` call made without one. */
    readonly requestId: string | undefined,
    details: PayoutsApiErrorDetails = {},
  ) {
    const truncation = details.bodyCutShort ? `; the reply body was ${details.bodyCutShort} and is kept truncated` : '';
    super(`${callSubject(requestId, details)} was rejected by the payouts API with HTTP ${status}${truncation}.`);
    this.headers = details.headers ?? {};
    this.bodyTruncated = details.bodyTruncated ?? details.bodyCutShort !== undefined;
    this.bodyLength = details.bodyLength ?? byteLengthOf(body);
    this.method = details.method;
    this.path = details.path;
  }
}

/** The size in bytes of a body given by hand (in a test, say): its text, or its JSON. */
function byteLengthOf(body: unknown): number {
  try {
    return Buffer.byteLength(typeof body === 'string' ? body : (JSON.stringify(body) ?? ''));
  } catch {
    return 0;
  }
}
