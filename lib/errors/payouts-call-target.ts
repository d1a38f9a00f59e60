import { quoted } from '../common/printable.js';

/** Which request to the payouts API an error is about. */
export interface PayoutsCallTarget {
  /** The HTTP method, such as `POST`. */
  readonly method?: string;
  /** The URL path (base URL path included), without the query string; credentials are redacted from it. */
  readonly path?: string;
}

/**
 * How a message names the call: `Payout request "req_1" (POST /v1/payouts)`, or `Request GET /v1/payouts/po_1`. The
 * `request_id` is the caller's, any string: quoted and escaped, so that a message logged as it is stays one line.
 */
export function callSubject(requestId: string | undefined, { method, path }: PayoutsCallTarget): string {
  const where = method && path ? `${method} ${path}` : undefined;
  if (requestId === undefined) return where ? `Request ${where}` : 'Request';
  return where ? `Payout request ${quoted(requestId)} (${where})` : `Payout request ${quoted(requestId)}`;
}
