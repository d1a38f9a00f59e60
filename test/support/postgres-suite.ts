import { describe, it } from 'vitest';
import { findPostgresBin } from './postgres-server.js';

/** Set by CI, so that a missing PostgreSQL fails the run instead of skipping the PostgreSQL specs. */
export const REQUIRE_POSTGRES = process.env.PAYOUTS_TEST_REQUIRE_POSTGRES === '1';

const MISSING =
  'PostgreSQL (initdb and postgres) is not on the PATH nor in /usr/lib/postgresql (on Debian: apt-get install postgresql)';

/**
 * `describe` for specs that need a real PostgreSQL. Without one they are skipped, with the reason in the suite's
 * name, unless `PAYOUTS_TEST_REQUIRE_POSTGRES=1`, which turns the missing server into a failure.
 */
export function describeWithPostgres(name: string, body: () => void): void {
  if (findPostgresBin()) {
    describe(name, body);
  } else if (REQUIRE_POSTGRES) {
    describe(name, () => {
      it('finds PostgreSQL, required by PAYOUTS_TEST_REQUIRE_POSTGRES=1', () => {
        throw new Error(MISSING);
      });
    });
  } else {
    // Printed as well as put in the name, since a run's summary only counts skipped tests.
    console.warn(`Skipping "${name}": ${MISSING}. Set PAYOUTS_TEST_REQUIRE_POSTGRES=1 to make this a failure.`);
    describe.skip(`${name} (skipped: ${MISSING})`, body);
  }
}
