export { payoutLedgerPostgres, type PayoutLedgerPostgresOptions } from './payout-ledger-postgres.js';
export type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from './postgres-pool.js';
export { PAYOUT_LEDGER_SCHEMA_VERSION } from './migrations/index.js';
