import { PayoutOutcomeUnknownError } from '../errors/payout-outcome-unknown.error.js';
import type { PayoutsCallTarget } from '../errors/payouts-call-target.js';
import { PayoutsNetworkError } from '../errors/payouts-network.error.js';

/**
 * Failures that happen before a connection exists, so no byte of the request reached the API. TLS certificate
 * failures (`UNABLE_TO_VERIFY_LEAF_SIGNATURE` and every code containing `CERT`) are found in the handshake, before
 * anything is sent, too.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/**
 * Turns whatever the HTTP client threw into one of our errors. Only the error code is read:
 * the client's error carries the request headers (API key, token) and must go no further.
 * Anything not known to precede sending counts as sent, since the payout may then exist.
 */
export function transportFailure(
  error: unknown,
  requestId: string | undefined,
  target: PayoutsCallTarget = {},
): PayoutsNetworkError | PayoutOutcomeUnknownError {
  const code = errorCode(error);
  if (NOT_SENT_CODES.has(code) || code.includes('CERT')) {
    return new PayoutsNetworkError(requestId, code, target);
  }
  return new PayoutOutcomeUnknownError(requestId, code, target);
}

/** The error's code when it is a plain code such as `ECONNRESET`, otherwise `UNKNOWN`: nothing else of it is read. */
export function errorCode(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : 'UNKNOWN';
}
