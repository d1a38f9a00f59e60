import { PayoutsError } from './payouts.error.js';

/**
 * A queue worker's run of a notification's handlers failed: one handler or more threw or rejected (each failure is
 * logged with its stack). The queue retries the notification with backoff, running every handler again, so handlers
 * must tolerate a second run; after the last attempt the job stays in the failed set, to be replayed.
 */
export class NotificationHandlersError extends PayoutsError {
  constructor(
    readonly dedupeKey: string,
    /** The failing handlers, as `ClassName.method`. */
    readonly handlers: readonly string[],
    /** Each failure's message, in the order of `handlers`: what BullMQ keeps as the job's failed reason. */
    messages: readonly string[],
  ) {
    const failures = handlers.map((handler, index) => `${handler}: ${messages[index]}`).join('; ');
    super(`Handler failure on notification ${dedupeKey}: ${failures}`);
  }
}
