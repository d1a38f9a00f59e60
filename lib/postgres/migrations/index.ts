import { payoutLedgerV1 } from './001-payout-ledger.js';

/**
 * Every version of the ledger's schema, in order: each takes the schema from the previous one. A released version is
 * never edited; a change is a new one.
 */
export const PAYOUT_LEDGER_MIGRATIONS: readonly {
  readonly version: number;
  readonly sql: (schema: string) => string;
}[] = [{ version: 1, sql: payoutLedgerV1 }];

/** The schema's version that this version of the package writes and reads. */
export const PAYOUT_LEDGER_SCHEMA_VERSION = PAYOUT_LEDGER_MIGRATIONS[PAYOUT_LEDGER_MIGRATIONS.length - 1]!.version;
