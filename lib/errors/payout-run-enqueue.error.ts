import { PayoutsError } from './payouts.error.js';

/**
 * What is known of one item of an `enqueue()` that Redis did not let finish:
 * - `queued`: its job is in the queue (added by this call, or by an earlier one);
 * - `maybe-queued`: Redis may or may not have taken its job;
 * - `not-queued`: no job was added for it: nothing is sent for it until it is enqueued again;
 * - `refused`: invalid, or its `request_id` is used for a different body (enqueued again, it is refused again).
 */
export type PayoutRunEnqueueItemStatus = 'queued' | 'maybe-queued' | 'not-queued' | 'refused';

export interface PayoutRunEnqueueItemState {
  /** Its index in the array given to `enqueue()`. */
  readonly index: number;
  readonly requestId: string | undefined;
  readonly status: PayoutRunEnqueueItemStatus;
}

/**
 * `enqueue()` of a payout run could not finish: Redis gave no reply within `enqueueTimeoutMs`, or answered with an
 * error. `items` says, for every item given, what is known of it. Enqueueing the same items again, under the same
 * `runId`, is safe, and is what to do: a `request_id` already queued is not queued twice, and one that was claimed
 * but left without its job gets its job then.
 */
export class PayoutRunEnqueueError extends PayoutsError {
  /** Enqueueing the same items again is always safe: nothing is queued twice. */
  readonly retrySafe = true;

  constructor(
    readonly runId: string,
    /** `'timeout'` when no reply came within `enqueueTimeoutMs`, `'error'` when BullMQ or Redis reported one. */
    readonly reason: 'timeout' | 'error',
    readonly items: readonly PayoutRunEnqueueItemState[],
    detail: string,
    options?: { cause?: unknown },
  ) {
    const count = (status: PayoutRunEnqueueItemStatus) => items.filter((item) => item.status === status).length;
    super(
      `Payout run ${runId} was not fully enqueued: ${detail}. Of ${items.length} items, ${count('queued')} queued, ` +
        `${count('maybe-queued')} maybe queued, ${count('not-queued')} not queued, ${count('refused')} refused. ` +
        'Enqueueing the same items again is safe: it queues what is missing and nothing twice.',
      options,
    );
  }
}
