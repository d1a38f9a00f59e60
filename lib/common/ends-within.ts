import { withDeadline } from './with-deadline.js';

/**
 * Whether `pending` (a background pass, a worker's close) ends within `ms`, a rejection counting as not ended: a
 * shutdown waits that long at most for what waits on Redis, which may be for ever while Redis does not answer.
 */
export function endsWithin(pending: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (pending === undefined) return Promise.resolve(true);
  return withDeadline(
    pending.then(() => true),
    ms,
    () => new Error('timeout'),
  ).catch(() => false);
}
