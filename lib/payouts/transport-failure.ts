import { NOT_CONNECTED_ERROR_CODES, systemErrorCode } from '../common/network-error-codes.js';
import { PayoutOutcomeUnknownError } from '../errors/payout-outcome-unknown.error.js';
import { PayoutsNetworkError } from '../errors/payouts-network.error.js';


/**
 * Turns whatever the HTTP client threw into one of our errors. Only the error code is read:
 * the client's error carries the request headers (API key, token) and must go no further.
 * Anything not known to precede sending counts as sent, since the payout may then exist.
 */
export function transportFailure(error: unknown, requestId: string): PayoutsNetworkError | PayoutOutcomeUnknownError {
  const code = systemErrorCode(error) ?? 'UNKNOWN';
  if (NOT_CONNECTED_ERROR_CODES.has(code) || code.includes('CERT')) {
    return new PayoutsNetworkError(requestId, code);
  }
  return new PayoutOutcomeUnknownError(requestId, code);
}
