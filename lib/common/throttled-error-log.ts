import type { PackageLogger } from './package-logger.js';

const INTERVAL_MS = 60_000;

/**
 * Logs the `error` events of a BullMQ queue or worker, which repeat on every reconnection attempt while Redis is
 * away: the first at once, then at most one a minute with the count of those left out. Listening to them also keeps
 * an unhandled `error` event from ending the process.
 */
export function throttledErrorLog(logger: PackageLogger, what: string): (error: Error) => void {
  let lastAt = Number.NEGATIVE_INFINITY;
  let skipped = 0;
  return (error) => {
    const now = Date.now();
    if (now - lastAt < INTERVAL_MS) {
      skipped += 1;
      return;
    }
    const more = skipped === 0 ? '' : ` (${skipped} more since the last report)`;
    logger.error(`${what}: ${error.message}${more}`);
    lastAt = now;
    skipped = 0;
  };
}
