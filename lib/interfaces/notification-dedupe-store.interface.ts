import type { PayoutsHealthSource } from './payouts-health-source.interface.js';
/**
 * The outcome of claiming a notification's dedupe key:
 * - `'claimed'`: first delivery, this caller runs the handlers;
 * - `'in-progress'`: another delivery of the same notification is running its handlers now;
 * - `'handled'`: the notification was handled and acknowledged before.
 */
export type NotificationClaim = 'claimed' | 'in-progress' | 'handled';

/**
 * What the earlier deliveries of a notification left of its handlers, each named by its id (`ClassName.method`,
 * the `id` of `NotificationHandlerRef`). The store keeps it as it is given; only the package reads it.
 */
export interface NotificationHandlerRecord {
  /** The handlers that have succeeded: a re-send does not run them again. */
  readonly succeeded: readonly string[];
  /** For each handler that ran and has not succeeded yet, how many of its runs failed (or outlived the time limit). */
  readonly failures: Readonly<Record<string, number>>;
}

/**
 * A claim that also answers what earlier deliveries recorded: `{ claim: 'claimed', record }` when this delivery runs
 * the handlers and an earlier one left a record, else a plain `NotificationClaim`.
 */
export type NotificationRecordedClaim =
  NotificationClaim | { readonly claim: 'claimed'; readonly record: NotificationHandlerRecord };

/**
 * Remembers which notifications are being handled or were handled, so re-sends do not run handlers twice.
 * Implement it on a shared store (for example Redis) when several instances receive notifications.
 *
 * The route passes every method a `claimId` of its own for each delivery, the same for that delivery's `claim` and
 * its `complete` or `release`. A store shared by several instances uses it to tell deliveries apart: `release` must
 * drop only the caller's own claim, never another delivery's claim that replaced an expired one, nor a handled mark.
 * A store that ignores it (methods with one parameter) still works as before.
 *
 * A store that also has `claimWithRecord` and `releaseWithRecord` remembers, per notification, which handlers
 * succeeded, so that a re-send runs only the others. Without them (a store written before they existed) a re-send
 * after a failure runs every handler of the notification again, as it always did.
 */
export interface NotificationDedupeStore {
  /** Atomically claims `key` for the delivery `claimId` unless it is already claimed or handled. */
  claim(key: string, claimId?: string): NotificationClaim | Promise<NotificationClaim>;
  /**
   * Marks `key` as handled, even when the claim of `claimId` has expired meanwhile (its handlers did succeed);
   * later claims answer `'handled'` until the entry expires. Any record of the key is dropped.
   */
  complete(key: string, claimId?: string): void | Promise<void>;
  /**
   * Drops the claim of `claimId` after its handling failed, so the re-send runs the handlers again. A store with
   * records keeps the record the key had when it was claimed.
   */
  release(key: string, claimId?: string): void | Promise<void>;
  /**
   * Optional, with `releaseWithRecord`: claims `key` as `claim` does, and when the claim succeeds over a key that an
   * earlier delivery released with a record, answers that record with it.
   */
  claimWithRecord?(key: string, claimId: string): NotificationRecordedClaim | Promise<NotificationRecordedClaim>;
  /**
   * Optional, with `claimWithRecord`: drops the claim of `claimId` as `release` does, and keeps `record` in its place
   * (replacing the record it had) for as long as a handled mark is kept, for the next delivery's claim to answer.
   */
  releaseWithRecord?(key: string, claimId: string, record: NotificationHandlerRecord): void | Promise<void>;
  /** What health checks ask of a shared store's connection (`nestjs-payouts/terminus`); an in-memory store has none. */
  readonly health?: PayoutsHealthSource;
}
