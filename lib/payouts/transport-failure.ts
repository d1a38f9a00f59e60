import { NOT_CONNECTED_ERROR_CODES, systemErrorCode } from '../common/network-error-codes.js';
import { PayoutOutcomeUnknownError } from '../errors/payout-outcome-unknown.error.js';
import type { PayoutsCallTarget } from '../errors/payouts-call-target.js';
import { PayoutsNetworkError } from '../errors/payouts-network.error.js';

/**
 * TLS certificate failures (`UNABLE_TO_VERIFY_LEAF_SIGNATURE` and every code containing `CERT`) are found in the
 * handshake, before anything is sent, like the failures that precede a connection.
 */
function isNotSent(code: string): boolean {
  return NOT_CONNECTED_ERROR_CODES.has(code) || code.includes('CERT') || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE';
}

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
  if (isNotSent(code)) return new PayoutsNetworkError(requestId, code, target);
  return new PayoutOutcomeUnknownError(requestId, code, target);
}

/** The error's code when it is a plain code such as `ECONNRESET`, otherwise `UNKNOWN`: nothing else of it is read. */
export function errorCode(error: unknown): string {
  return systemErrorCode(error) ?? 'UNKNOWN';
}
