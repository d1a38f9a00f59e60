/**
 * The outcome of claiming a notification's dedupe key:
 * - `'claimed'`: first delivery, this caller runs the handlers;
 * - `'in-progress'`: another delivery of the same notification is running its handlers now;
 * - `'handled'`: the notification was handled and acknowledged before.
 */
export type NotificationClaim = 'claimed' | 'in-progress' | 'handled';

/**
 * Remembers which notifications are being handled or were handled, so re-sends do not run handlers twice.
 * Implement it on a shared store (for example Redis) when several instances receive notifications.
 */
export interface NotificationDedupeStore {
  /** Atomically claims `key` unless it is already claimed or handled. */
  claim(key: string): NotificationClaim | Promise<NotificationClaim>;
  /** Marks a claimed key as handled; later claims answer `'handled'` until the entry expires. */
  complete(key: string): void | Promise<void>;
  /** Drops a claim whose handling failed, so the re-send runs the handlers again. */
  release(key: string): void | Promise<void>;
}
