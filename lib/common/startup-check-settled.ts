import { withDeadline } from './with-deadline.js';

/** How long closing a BullMQ queue or worker first waits for its connections' start-up check. */
export const STARTUP_CHECK_WAIT_MS = 1000;

/** What a BullMQ 5 or 6 `Queue` or `Worker` offers to follow its connections' start-up. */
interface StartingBullmqObject {
  waitUntilReady(): Promise<unknown>;
  once(event: 'error' | 'ioredis:close', listener: () => void): unknown;
  off(event: 'error' | 'ioredis:close', listener: () => void): unknown;
}

/**
 * Resolves once the connections of a BullMQ queue or worker the package created have finished their start-up check
 * (connected, Redis's version read), or after `STARTUP_CHECK_WAIT_MS`; never rejects. Called before each close:
 * bullmq 5 drops a connection's listeners when it closes, so a check cut short by close() is rejected with nobody
 * listening, an unhandled rejection that ends the process (bullmq 6.7 waits for the check itself). A connection that
 * fails or is lost meanwhile ends the wait at once: Redis is away, the check cannot finish, and on bullmq 5 closing
 * before the connection's next attempt fails is what leaves nothing rejected with nobody listening. Shutdown
 * neither hangs nor throws for it.
 */
export async function startupCheckSettled(bullmqObject: StartingBullmqObject): Promise<void> {
  let connectionFailed!: () => void;
  const failed = new Promise<void>((resolve) => (connectionFailed = resolve));
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
