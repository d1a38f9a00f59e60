import { withDeadline } from '../common/with-deadline.js';

/** Redis gave no reply to one step of a call of `PayoutRunsService` within `enqueueTimeoutMs`. */
export class RedisReplyTimeout extends Error {
  constructor(ms: number) {
    super(`Redis gave no reply within enqueueTimeoutMs (${ms} ms)`);
  }
}

/**
 * One reply of Redis to a call of `PayoutRunsService`, within `ms`: the queue's connection waits for Redis for ever
 * (BullMQ's workers need it to), so the calls a person or an app makes set their own bound.
 */
export function redisReply<T>(pending: Promise<T>, ms: number): Promise<T> {
  return withDeadline(pending, ms, () => new RedisReplyTimeout(ms));
}
