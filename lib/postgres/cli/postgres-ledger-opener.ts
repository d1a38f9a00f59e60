import type { PayoutLedgerFactory } from '../../index.js';
import { payoutLedgerPostgres } from '../payout-ledger-postgres.js';
import type { PostgresPool } from '../postgres-pool.js';
import { loadPg } from './pg-module.js';

/**
 * The PostgreSQL ledger of `nestjs-payouts payout-runs --ledger postgres`: a small pool of its own on the URL, ended by
 * `close()`. Rejects with what to install when `pg` is missing.
 */
export async function openPostgresLedger(
  { databaseUrl, schema }: { databaseUrl: string; schema: string },
  timeoutMs: number,
): Promise<{ factory: PayoutLedgerFactory; close(): Promise<void> }> {
  const pg = await loadPg();
  if (!pg) throw new Error('--ledger postgres needs the pg package: npm install pg');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // An idle connection the server drops is reported here, not thrown.
  pool.on('error', () => undefined);
  return {
    factory: payoutLedgerPostgres({ pool: pool as PostgresPool, schema, timeoutMs: Math.max(timeoutMs, 100) }),
    close: () => pool.end(),
  };
}
