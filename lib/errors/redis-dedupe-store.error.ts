import { PayoutsError } from './payouts.error.js';

/** What the Redis dedupe store was doing when Redis failed it. */
export type RedisDedupeStoreOperation = 'claim' | 'complete' | 'release';

/**
 * Redis answered an operation of `RedisNotificationDedupeStore` with an error, or gave no reply within the store's
 * `commandTimeoutMs`. The notification route logs it; nothing needs retrying by hand:
 * - a failed `claim` made the route answer `500` before any handler ran, so the service sends the notification again;
 * - a failed `complete` came after the handlers succeeded, and the notification was still acknowledged;
 * - a failed `release` leaves the claim to expire after the store's lease, before the service's next re-send.
 */
export class RedisDedupeStoreError extends PayoutsError {
  constructor(
    readonly operation: RedisDedupeStoreOperation,
    /** `'timeout'` when no reply came within `commandTimeoutMs`, `'error'` when the client or Redis reported one. */
    readonly reason: 'timeout' | 'error',
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`The Redis dedupe store could not ${operation} a notification: ${detail}.`, options);
  }
}
