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
