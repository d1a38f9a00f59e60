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
 *
 * The route passes every method a `claimId` of its own for each delivery, the same for that delivery's `claim` and
 * its `complete` or `release`. A store shared by several instances uses it to tell deliveries apart: `release` must
 * drop only the caller's own claim, never another delivery's claim that replaced an expired one, nor a handled mark.
 * A store that ignores it (methods with one parameter) still works as before.
 */
export interface NotificationDedupeStore {
  /** Atomically claims `key` for the delivery `claimId` unless it is already claimed or handled. */
  claim(key: string, claimId?: string): NotificationClaim | Promise<NotificationClaim>;
  /**
   * Marks `key` as handled, even when the claim of `claimId` has expired meanwhile (its handlers did succeed);
   * later claims answer `'handled'` until the entry expires.
   */
  complete(key: string, claimId?: string): void | Promise<void>;
  /** Drops the claim of `claimId` after its handling failed, so the re-send runs the handlers again. */
  release(key: string, claimId?: string): void | Promise<void>;
}
