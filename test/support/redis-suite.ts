import { describe, it } from 'vitest';
import { findRedisServer } from './redis-server.js';

/** Set by CI, so that a missing `redis-server` fails the run instead of skipping the Redis specs. */
export const REQUIRE_REDIS = process.env.PAYOUTS_TEST_REQUIRE_REDIS === '1';

const MISSING = 'redis-server is not on the PATH (on Debian: apt-get install redis-server)';

/**
 * `describe` for specs that need a real `redis-server`. Without one they are skipped, with the reason in the
 * suite's name, unless `PAYOUTS_TEST_REQUIRE_REDIS=1`, which turns the missing server into a failure.
 */
export function describeWithRedis(name: string, body: () => void): void {
  if (findRedisServer()) {
    describe(name, body);
  } else if (REQUIRE_REDIS) {
    describe(name, () => {
      it('finds redis-server, required by PAYOUTS_TEST_REQUIRE_REDIS=1', () => {
        throw new Error(MISSING);
      });
    });
  } else {
    // Printed as well as put in the name, since a run's summary only counts skipped tests.
    console.warn(`Skipping "${name}": ${MISSING}. Set PAYOUTS_TEST_REQUIRE_REDIS=1 to make this a failure.`);
    describe.skip(`${name} (skipped: ${MISSING})`, body);
  }
}
