import type { PayoutsQueueFigures, PayoutsWorkerState } from '../interfaces/payouts-health-source.interface.js';

/** The parts of a BullMQ 5 or 6 `Queue` that health checks read, described by shape so this file loads no bullmq. */
interface QueueLike {
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
  isPaused(): Promise<boolean>;
  getRateLimitTtl(): Promise<number>;
}

/** The parts of a BullMQ 5 or 6 `Worker` that health checks read. */
interface WorkerLike {
  isRunning(): boolean;
  isPaused(): boolean;
}

/** The client of the connection the queue already holds: bullmq 6 keeps it on its backend, bullmq 5 on the queue. */
export async function queueClient(queue: object): Promise<unknown> {
  const { getBackend } = queue as { getBackend?: () => { client: Promise<unknown> } };
  const holder = getBackend ? getBackend.call(queue) : (queue as { client: Promise<unknown> });
  return holder.client;
}

/** Sends `PING` on the connection the queue already holds. */
export async function pingQueue(queue: object): Promise<void> {
  const client = (await queueClient(queue)) as { ping(): Promise<unknown> };
  await client.ping();
}

/** A queue's backlog, failed set, pause and rate-limit pause, and this instance's worker if it runs one. */
export async function queueFigures(queue: object, worker: object | undefined): Promise<PayoutsQueueFigures> {
  const bull = queue as QueueLike;
  const [counts, paused, ttl] = await Promise.all([
    bull.getJobCounts('waiting', 'paused', 'delayed', 'prioritized', 'failed'),
    bull.isPaused(),
    bull.getRateLimitTtl(),
  ]);
  const state = workerState(worker);
  return {
    // bullmq 5 keeps the waiting jobs of a paused queue in a list of their own.
    backlog: (counts.waiting ?? 0) + (counts.paused ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0),
    failed: counts.failed ?? 0,
    paused,
    rateLimitedForMs: Math.max(0, ttl),
    ...(state && { worker: state }),
  };
}

/** Whether this instance's worker runs and is not paused; `undefined` without one. */
export function workerState(worker: object | undefined): PayoutsWorkerState | undefined {
  const running = worker as WorkerLike | undefined;
  return running && { running: running.isRunning(), paused: running.isPaused() };
}
