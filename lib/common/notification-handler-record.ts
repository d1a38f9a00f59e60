import type { NotificationHandlerRecord } from '../interfaces/notification-dedupe-store.interface.js';
import { isJsonObject } from './json-object.js';
import { isWholeNumber } from './whole-number.js';

/*
 * The record of a notification's handlers, read and written the same way by the route (in the dedupe store) and by
 * a queue's workers (in the job): which succeeded, and how many runs of each other one failed.
 */

/** A stored record as this version reads it: `undefined` when it is missing or of another shape. */
export function readHandlerRecord(value: unknown): NotificationHandlerRecord | undefined {
  if (!isJsonObject(value)) return undefined;
  const { succeeded, failures } = value;
  if (!Array.isArray(succeeded) || !succeeded.every((id) => typeof id === 'string')) return undefined;
  if (!isJsonObject(failures) || !Object.values(failures).every((count) => isWholeNumber(count, 1))) return undefined;
  return { succeeded, failures } as NotificationHandlerRecord;
}

export function hasSucceeded(record: NotificationHandlerRecord, id: string): boolean {
  return record.succeeded.includes(id);
}

/** The `attempt` of a handler's next run: one more than its runs that failed. */
export function attemptOf(record: NotificationHandlerRecord, id: string): number {
  return 1 + (Object.hasOwn(record.failures, id) ? record.failures[id]! : 0);
}

/**
 * `record` (none: a first run) after a run in which the handlers `succeeded` succeeded and the handlers `failed`
 * failed. Entries of handlers a deploy removed are kept: a rollback must not run one that already succeeded.
 */
export function nextHandlerRecord(
  record: NotificationHandlerRecord | undefined,
  succeeded: readonly string[],
  failed: readonly string[],
): NotificationHandlerRecord {
  const done = record ? [...record.succeeded, ...succeeded] : [...succeeded];
  // No prototype: the ids of a record read back are outside data, and `__proto__` must stay a plain key.
  const failures = Object.create(null) as Record<string, number>;
  if (record) {
    for (const [id, count] of Object.entries(record.failures)) if (!done.includes(id)) failures[id] = count;
  }
  for (const id of failed) failures[id] = (Object.hasOwn(failures, id) ? failures[id]! : 0) + 1;
  return { succeeded: done, failures };
}
