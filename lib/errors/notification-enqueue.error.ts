import { PayoutsError } from './payouts.error.js';

/**
 * Queue mode could not store a notification: Redis answered the add with an error, or gave no reply within the
 * queue's `enqueueTimeoutMs`. The route logs it and answers `500`, so the payouts service sends the notification
 * again; nothing needs retrying by hand. A re-send, or an add that still lands late, finds the same job id, so the
 * handlers run once whichever way it goes.
 */
export class NotificationEnqueueError extends PayoutsError {
  constructor(
    readonly dedupeKey: string,
    /** `'timeout'` when no reply came within `enqueueTimeoutMs`, `'error'` when BullMQ or Redis reported one. */
    readonly reason: 'timeout' | 'error',
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`The notification queue could not store notification ${dedupeKey}: ${detail}.`, options);
  }
}
