import pg from 'pg';
import type { PostgresServer } from '../support/postgres-server.js';

let databases = 0;

/** A database of its own on `server`, and a pool on it that `end()` closes. */
export async function freshDatabase(server: PostgresServer, name = 'ledger'): Promise<{ url: string; pool: pg.Pool }> {
  const database = await server.createDatabase(`${name}_${process.pid}_${++databases}`);
  const pool = new pg.Pool({ ...server.connection(database), max: 20 });
  // An idle connection that the server closes (stopped by a test) is reported here rather than thrown.
  pool.on('error', () => undefined);
  return { url: server.url(database), pool };
}

/** One query's rows, on a connection of its own. */
export async function rowsOf(pool: pg.Pool, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await pool.query(text, values)).rows as Record<string, unknown>[];
}
