import {
  PayoutsAbortedError,
  PayoutsAccessTokenError,
  PayoutsApiError,
  PayoutsCallOptionsError,
  PayoutsNetworkError,
  PayoutValidationError,
} from '../index.js';
import { parseRetryAfterMs } from '../payouts/retry-delay.js';
import type { PayoutRunError } from './payout-run-results.js';

/**
 * What one request of a run tells: the payout is sent; refused for good; surely not processed (send again after a
 * backoff); throttled by the provider (`429`/`503`: not processed, pause the account's queue); or unknown.
 */
export type PayoutAttemptVerdict =
  | { readonly kind: 'refused'; readonly error: PayoutRunError }
  | { readonly kind: 'not-sent'; readonly error: PayoutRunError }
  | { readonly kind: 'throttled'; readonly error: PayoutRunError; readonly retryAfterMs: number | undefined }
  | { readonly kind: 'unknown'; readonly error: PayoutRunError };

/** The verdict on an error of `createPayout()`; anything unforeseen is unknown, which never sends twice. */
export function verdictOf(error: unknown, now: number = Date.now()): PayoutAttemptVerdict {
  const summary = summaryOf(error);
  if (error instanceof PayoutsApiError) {
    if (error.status === 429 || error.status === 503) {
      const retryAfter = error.headers['retry-after'];
      return {
        kind: 'throttled',
        error: summary,
        retryAfterMs: retryAfter === undefined ? undefined : parseRetryAfterMs(retryAfter, now),
      };
    }
    if (error.status >= 400 && error.status < 500) return { kind: 'refused', error: summary };
    return { kind: 'unknown', error: summary };
  }
  if (
    error instanceof PayoutsNetworkError ||
    error instanceof PayoutsAccessTokenError ||
    error instanceof PayoutsAbortedError
  ) {
    return { kind: 'not-sent', error: summary };
  }
  if (error instanceof PayoutValidationError || error instanceof PayoutsCallOptionsError) {
    return { kind: 'refused', error: summary };
  }
  return { kind: 'unknown', error: summary };
}

/** What is kept of an error: its name, message, status, code and (redacted) reply body. */
export function summaryOf(error: unknown): PayoutRunError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const { status, code, body } = error as { status?: unknown; code?: unknown; body?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(typeof status === 'number' && { status }),
    ...(typeof code === 'string' && { code }),
    ...(body !== undefined && { body }),
  };
}

/** The outcome kept for a payout whose worker died (or lost its lock) after it began to send. */
export const INTERRUPTED: PayoutRunError = {
  name: 'Interrupted',
  message:
    'The worker sending this payout stopped (it died or lost its lock) before its outcome was recorded; ' +
    'the request may have reached the provider.',
};
