import { withDeadline } from './with-deadline.js';

/**
 * Whether `pending`, which never rejects (a background pass), ends within `ms`: a shutdown waits for a pass under way
 * that long at most, as a pass waits on Redis for ever while Redis does not answer.
 */
export function endsWithin(pending: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (pending === undefined) return Promise.resolve(true);
  return withDeadline(
    pending.then(() => true),
    ms,
    () => new Error('timeout'),
  ).catch(() => false);
}
