import { PayoutsError } from './payouts.error.js';

/** The command that creates or upgrades the ledger's tables. */
export const PAYOUT_LEDGER_MIGRATE_COMMAND = 'npx nestjs-payouts postgres migrate';

/**
 * Thrown at boot when the payout ledger's schema is not the one this version of the package writes: missing or older
 * (run the migrate command, or set `migrate: true`), or newer (a later version of the package migrated it: upgrade
 * this one, as it cannot know what the newer schema expects). Payout runs then refuse to start rather than write
 * rows a newer version may read differently.
 */
export class PayoutLedgerSchemaError extends PayoutsError {
  constructor(
    readonly schema: string,
    readonly problem: 'missing' | 'older' | 'newer',
    /** The version found in the database (0 when missing). */
    readonly found: number,
    /** The version this package writes. */
    readonly expected: number,
  ) {
    super(messageOf(schema, problem, found, expected));
  }
}

function messageOf(schema: string, problem: 'missing' | 'older' | 'newer', found: number, expected: number): string {
  const name = `The payout ledger's schema "${schema}"`;
  if (problem === 'newer') {
    return (
      `${name} is at version ${found}, newer than this version of nestjs-payouts knows (${expected}): upgrade ` +
      `nestjs-payouts here to the version that migrated it (${PAYOUT_LEDGER_MIGRATE_COMMAND} never downgrades)`
    );
  }
  const what = problem === 'missing' ? 'does not exist' : `is at version ${found}, older than ${expected}`;
  return (
    `${name} ${what}: run "${PAYOUT_LEDGER_MIGRATE_COMMAND} --schema ${schema}" with DATABASE_URL set ` +
    `(or pass migrate: true to payoutLedgerPostgres())`
  );
}
