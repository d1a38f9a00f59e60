import type { RunningJobs } from './running-jobs.js';
import { withDeadline } from './with-deadline.js';

/** How long closing a BullMQ queue or worker first waits for its connections' start-up check. */
export const STARTUP_CHECK_WAIT_MS = 1000;

/** What a BullMQ 5 or 6 `Queue` or `Worker` offers to follow its connections' start-up and to close them. */
interface BullmqObject {
  waitUntilReady(): Promise<unknown>;
  once(event: 'error' | 'ioredis:close', listener: () => void): unknown;
  off(event: 'error' | 'ioredis:close', listener: () => void): unknown;
  close(force?: boolean): Promise<void>;
  disconnect(): Promise<void>;
}

/**
 * Closes a BullMQ queue or worker the package created: once its start-up check has settled (see
 * `startupCheckSettled`), within `timeoutMs`, else its connections are dropped (within as long). Never rejects, so
 * that a shutdown or a failed bootstrap goes on whatever Redis does.
 */
export async function closeBullmq(
  closable: BullmqObject,
  { timeoutMs = 1000, force = false }: { timeoutMs?: number; force?: boolean } = {},
): Promise<void> {
  const timeout = () => new Error('timeout');
  await startupCheckSettled(closable);
  await withDeadline(closable.close(force), timeoutMs, timeout)
    .catch(() => withDeadline(closable.disconnect(), timeoutMs, timeout))
    .catch(() => undefined);
}

/**
 * How long a worker's connections may take to close once its jobs have ended: Redis answers a close within
 * milliseconds, so a longer wait means Redis is away (stopped, or not answering), and the connections are dropped.
 */
export const WORKER_CLOSE_TIMEOUT_MS = 1000;

/**
 * Stops a BullMQ worker the package created from taking jobs (`force`: without waiting for BullMQ's own view of the
 * running ones), waits up to `shutdownTimeoutMs` for the jobs `running` counts, then up to `WORKER_CLOSE_TIMEOUT_MS`
 * for its connections to close, past which they are dropped: only the jobs are waited for as long as the app allows,
 * never Redis. `'jobs-running'` when jobs still ran at `shutdownTimeoutMs` (they stop with the process), `'dropped'`
 * when Redis did not answer the close, `'closed'` otherwise. Never rejects.
 */
export async function closeWorker(
  worker: BullmqObject,
  running: RunningJobs,
  { shutdownTimeoutMs, force }: { shutdownTimeoutMs: number; force: boolean },
): Promise<'closed' | 'jobs-running' | 'dropped'> {
  const timeout = () => new Error('timeout');
  await startupCheckSettled(worker);
  const closed = worker.close(force).then(
    () => true,
    () => true,
  );
  const idle = await withDeadline(running.idle(), shutdownTimeoutMs, timeout).then(
    () => true,
    () => false,
  );
  if (!idle) return 'jobs-running';
  if (await withDeadline(closed, WORKER_CLOSE_TIMEOUT_MS, timeout).catch(() => false)) return 'closed';
  await withDeadline(worker.disconnect(), WORKER_CLOSE_TIMEOUT_MS, timeout).catch(() => undefined);
  return 'dropped';
}

/**
 * Resolves once the connections of a BullMQ queue or worker the package created have finished their start-up check
 * (connected, Redis's version read), or after `STARTUP_CHECK_WAIT_MS`; never rejects. Called before each close:
 * bullmq 5 drops a connection's listeners when it closes, so a check cut short by close() is rejected with nobody
 * listening, an unhandled rejection that ends the process (bullmq 6.7 waits for the check itself). A connection that
 * fails meanwhile ends the wait: Redis is away and the check cannot finish. It ends on the next turn of the event loop
 * after the failure, whose timers run once the failed socket's close callbacks have: the client then waits to try
 * again, and a check closed then is left pending, never rejected with the failure, while one closed in the middle of a
 * failing attempt would be. Shutdown neither hangs nor throws for it.
 */
export async function startupCheckSettled(bullmqObject: BullmqObject): Promise<void> {
  let connectionFailed!: () => void;
  const failed = new Promise<void>((resolve) => (connectionFailed = () => setTimeout(resolve, 0)));
  bullmqObject.once('error', connectionFailed);
  bullmqObject.once('ioredis:close', connectionFailed);
  try {
    const checked = Promise.race([bullmqObject.waitUntilReady(), failed]);
    await withDeadline(checked, STARTUP_CHECK_WAIT_MS, () => new Error('timeout')).catch(() => undefined);
  } finally {
    bullmqObject.off('error', connectionFailed);
    bullmqObject.off('ioredis:close', connectionFailed);
  }
}
