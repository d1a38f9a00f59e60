import type { PayoutsClientConfig } from './payouts-client-config.js';

/**
 * How long to wait before retry number `retry` (0 for the first retry): the server's `Retry-After`
 * when it sent one, otherwise exponential backoff with full jitter; never more than `maxDelayMs`.
 */
export function retryDelayMs(
  retry: number,
  policy: PayoutsClientConfig['retry'],
  retryAfter: string | undefined,
  random: () => number = Math.random,
  now: number = Date.now(),
): number {
  const serverDelay = retryAfter === undefined ? undefined : parseRetryAfterMs(retryAfter, now);
  if (serverDelay !== undefined) {
    return Math.min(serverDelay, policy.maxDelayMs);
  }
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** `Retry-After` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3); anything else is ignored. */
export function parseRetryAfterMs(value: string, now: number): number | undefined {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    return Number(trimmed) * 1000;
  }
  // Every HTTP date form names its month; this keeps Date.parse's leniency off plain numbers like "-5".
  const date = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
