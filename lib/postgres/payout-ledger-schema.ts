import { PayoutLedgerSchemaError } from '../index.js';
import { PAYOUT_LEDGER_MIGRATIONS, PAYOUT_LEDGER_SCHEMA_VERSION } from './migrations/index.js';
import type { PostgresQueryResult } from './postgres-pool.js';

/** The lock the migrations of one schema take, so that instances starting together apply them once. */
const MIGRATE_LOCK = 1346459983;
/** PostgreSQL's codes for a schema or a table that does not exist. */
const MISSING = new Set(['3F000', '42P01']);

/** A connection of the pool, or the command line's own client: the schema's statements are sent as text. */
interface SchemaClient {
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
}

/** A schema's name as SQL: checked when the options are read, quoted here. */
export function quotedSchema(schema: string): string {
  return `"${schema}"`;
}

/**
 * Brings the schema to this package's version in one transaction, under a lock on the schema's name: a second process
 * waits, then finds nothing left to do. A schema newer than this package knows is left alone and refused.
 */
export async function migratePayoutLedger(client: SchemaClient, schema: string): Promise<{ from: number; to: number }> {
  const s = quotedSchema(schema);
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATE_LOCK, schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.schema_version ` +
        '(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const from = await versionIn(client, s);
    if (from > PAYOUT_LEDGER_SCHEMA_VERSION) {
      throw new PayoutLedgerSchemaError(schema, 'newer', from, PAYOUT_LEDGER_SCHEMA_VERSION);
    }
    for (const migration of PAYOUT_LEDGER_MIGRATIONS) {
      if (migration.version <= from) continue;
      await client.query(migration.sql(s));
      await client.query(`INSERT INTO ${s}.schema_version (version) VALUES ($1)`, [migration.version]);
    }
    await client.query('COMMIT');
    return { from, to: Math.max(from, PAYOUT_LEDGER_SCHEMA_VERSION) };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Refuses a schema that is missing, older or newer than the one this package writes, naming what to do. */
export async function checkPayoutLedgerSchema(client: SchemaClient, schema: string): Promise<void> {
  let found: number;
  try {
    found = await versionIn(client, quotedSchema(schema));
  } catch (error) {
    if (!MISSING.has(String((error as { code?: unknown }).code))) throw error;
    found = 0;
  }
  if (found === PAYOUT_LEDGER_SCHEMA_VERSION) return;
  const problem = found === 0 ? 'missing' : found < PAYOUT_LEDGER_SCHEMA_VERSION ? 'older' : 'newer';
  throw new PayoutLedgerSchemaError(schema, problem, found, PAYOUT_LEDGER_SCHEMA_VERSION);
}

async function versionIn(client: SchemaClient, s: string): Promise<number> {
  const { rows } = await client.query(`SELECT coalesce(max(version), 0)::integer AS version FROM ${s}.schema_version`);
  return Number(rows[0]!.version);
}
