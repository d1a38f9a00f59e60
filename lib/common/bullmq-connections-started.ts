import { withDeadline } from './with-deadline.js';

/** How long closing waits for connections still starting: Redis answers in milliseconds when it is there. */
const STARTING_WAIT_MS = 1000;

/**
 * Waits, up to a second, for a BullMQ queue's or worker's connections to finish starting, or to fail; never rejects.
 * Called before closing one. bullmq 5 removes a connection's listeners when it closes, so a connection closed while
 * its start-up version check is still in flight rejects with nobody listening. That is an unhandled rejection
 * ("Connection is closed.") which can end the process as it shuts down. bullmq 6 handles it itself; with bullmq 5,
 * closing only started connections avoids it whenever Redis answers.
 */
export async function connectionsStarted(bull: { waitUntilReady(): Promise<unknown> }): Promise<void> {
  await withDeadline(bull.waitUntilReady(), STARTING_WAIT_MS, () => new Error('timeout')).catch(() => undefined);
}
