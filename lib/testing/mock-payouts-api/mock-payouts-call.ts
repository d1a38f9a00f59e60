import type { IncomingHttpHeaders } from 'node:http';
import { REDACTED } from '../../common/redacted-secret.js';
import type { MockFaultKind } from './mock-fault.js';

/** How a credential header compared with the value the mock expects. */
export type MockCredentialCheck = 'valid' | 'wrong' | 'missing';

/** A request as the fault rules see it, before the mock answers it. */
export interface MockPayoutsRequest {
  readonly method: string;
  /** The path and query, as sent. */
  readonly path: string;
  /** Every request header by lower-case name; `x-api-key` and `authorization` read `[redacted]`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON; `undefined` when it is empty, not JSON, or larger than the mock reads. */
  readonly body: unknown;
  /** The body's `request_id` when it is a string. */
  readonly requestId: string | undefined;
  /** How `X-API-Key` and the bearer token of `Authorization` compared with the expected values. */
  readonly credentials: { readonly apiKey: MockCredentialCheck; readonly accessToken: MockCredentialCheck };
}

/** One request the mock received, and how it was answered. */
export interface MockPayoutsCall extends MockPayoutsRequest {
  /** Its place in the order of arrival, from 0. */
  readonly index: number;
  readonly receivedAt: Date;
  /** The fault played instead of the usual answer, if a rule matched. */
  readonly fault: MockFaultKind | undefined;
  /**
   * The status replied; `undefined` while the answer is pending, when the connection was reset instead, or when the
   * client closed the connection before the answer (a deadline that passed during a latency).
   */
  readonly status: number | undefined;
  /** The body replied (parsed JSON, or the text of a malformed reply); `undefined` when there was no reply. */
  readonly replyBody: unknown;
  /** Whether the connection was reset instead of a reply. */
  readonly reset: boolean;
  /** Whether this request created a payout (a repeated `request_id` gets the first payout back and creates none). */
  readonly committed: boolean;
}

/** The headers as kept: one string per name, the two credential headers hidden. */
export function recordedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const recorded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    recorded[name] = name === 'x-api-key' || name === 'authorization' ? REDACTED : [value].flat().join(', ');
  }
  return recorded;
}
