import type { Queue } from 'bullmq';
import { notificationJobEventType, readNotificationJobData } from './notification-job.js';

/** A notification whose handlers failed on every attempt (or whose stored data no longer validates). */
export interface FailedNotification {
  readonly jobId: string;
  /** `undefined` when the job's data is not a notification this version can read. */
  readonly dedupeKey: string | undefined;
  readonly eventType: string;
  readonly attemptsMade: number;
  /** The last attempt's error message. */
  readonly failedReason: string;
  readonly failedAt: Date | undefined;
}

/** What became of a replay: the job is waiting again, there is no such job, or it is not in the failed set. */
export type ReplayOutcome = 'replayed' | 'not-found' | 'not-failed';

/** Jobs read from Redis in one call while listing. */
const PAGE_SIZE = 500;

/**
 * The dead-letter list of a notifications queue (the queue injected with `getPayoutsQueueToken()`), newest failure
 * first, `limit` at most from `offset`.
 */
export async function listFailedNotifications(
  queue: Queue,
  { offset = 0, limit = 100 }: { offset?: number; limit?: number } = {},
): Promise<FailedNotification[]> {
  const jobs = await queue.getFailed(offset, offset + limit - 1);
  return jobs.filter((job) => job !== undefined && job !== null).map(failedNotification);
}

/**
 * Runs a failed notification again, with a fresh set of attempts: it goes back to the waiting jobs, for any worker.
 */
export async function replayFailedNotification(queue: Queue, jobId: string): Promise<ReplayOutcome> {
  const job = await queue.getJob(jobId);
  if (!job) return 'not-found';
  if (!(await job.isFailed())) return 'not-failed';
  await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
  return 'replayed';
}

/**
 * Replays every notification of the failed set, as it is when the call starts (one that fails again meanwhile is not
 * replayed twice), and resolves with how many were replayed.
 */
export async function replayFailedNotifications(queue: Queue): Promise<number> {
  const ids: string[] = [];
  const total = await queue.getFailedCount();
  for (let start = 0; start < total; start += PAGE_SIZE) {
    const page = await queue.getFailed(start, start + PAGE_SIZE - 1);
    for (const job of page) if (job?.id !== undefined) ids.push(job.id);
  }
  let replayed = 0;
  for (const id of new Set(ids)) {
    if ((await replayFailedNotification(queue, id)) === 'replayed') replayed += 1;
  }
  return replayed;
}

function failedNotification(job: {
  id?: string;
  name: string;
  data: unknown;
  attemptsMade: number;
  failedReason: string;
  finishedOn?: number;
}): FailedNotification {
  return {
    jobId: job.id ?? '',
    dedupeKey: readNotificationJobData(job.data)?.dedupeKey,
    eventType: notificationJobEventType(job),
    attemptsMade: job.attemptsMade,
    failedReason: job.failedReason,
    failedAt: job.finishedOn === undefined ? undefined : new Date(job.finishedOn),
  };
}
