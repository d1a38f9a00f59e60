import { PayoutsError } from './payouts.error.js';

/** What a `PayoutsApiError` keeps of the reply besides its status and body. */
export interface PayoutsApiErrorDetails {
  /** Response headers, names in lowercase, credentials redacted. */
  headers?: Record<string, string>;
  /**
   * Why the body is incomplete, such as `larger than maxResponseBytes (1048576 bytes)`; absent when it arrived whole.
   * An incomplete body is kept as the text that arrived, never parsed.
   */
  bodyCutShort?: string;
}

/**
 * The payouts API answered with a non-2xx status (after any retries the policy allows).
 * `body` is the parsed JSON reply, or its text when it is not JSON (or arrived incomplete); the API key and the
 * access token are replaced with `[redacted]` wherever the reply echoed them.
 */
export class PayoutsApiError extends PayoutsError {
  readonly headers: Record<string, string>;
  /** True when the body did not arrive whole (too large, too slow or cut off): `body` is then the text received. */
  readonly bodyTruncated: boolean;

  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly requestId: string,
    details: PayoutsApiErrorDetails = {},
  ) {
    const truncation = details.bodyCutShort ? `; the reply body was ${details.bodyCutShort} and is kept truncated` : '';
    super(`Payout request "${requestId}" was rejected by the payouts API with HTTP ${status}${truncation}.`);
    this.headers = details.headers ?? {};
    this.bodyTruncated = details.bodyCutShort !== undefined;
  }
}
