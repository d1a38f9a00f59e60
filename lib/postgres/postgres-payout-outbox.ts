import type { Pool, PoolClient } from 'pg';
import type {
  PayoutLedgerOutbox,
  PayoutLedgerTransaction,
  PayoutPendingItem,
  PayoutPendingRow,
  PayoutPendingSubscription,
  PayoutPendingWrite,
} from '../interfaces/payout-outbox.interface.js';

/** Where the outbox's rows live: the ledger's schema and the channel its relays listen on. */
export interface PostgresOutboxTarget {
  readonly pool: Pool;
  /** The ledger's schema, quoted. */
  readonly schema: string;
  /** The notification channel, unquoted (LISTEN quotes it). */
  readonly channel: string;
  readonly account: string;
}

/**
 * The outbox of the Postgres ledger. Writes go through the caller's transaction with SQL that any driver runs as
 * given: text parameters only (the items as one JSON document), each `$n` used once and in order, and no `?`, so that
 * an adapter for a library with `?` placeholders (Knex) only swaps the markers. The relays move rows over the
 * ledger's own pool.
 */
export class PostgresPayoutOutbox implements PayoutLedgerOutbox {
  constructor(private readonly target: PostgresOutboxTarget) {}

  async writePending(
    db: PayoutLedgerTransaction,
    runId: string,
    items: readonly PayoutPendingItem[],
    trace: Readonly<Record<string, string>> | undefined,
  ): Promise<PayoutPendingWrite[]> {
    if (items.length === 0) return [];
    const { schema, channel, account } = this.target;
    // The ledger's own claim, as enqueue() without `db` runs it, here in the caller's transaction and as 'pending': a
    // request_id already in the ledger (committed, or written earlier in this transaction) is left as it is, and one
    // that another transaction is writing at the same time makes this one wait for its outcome.
    const claims = rowsOf(
      await db.query(`SELECT verdict, run_id FROM ${schema}.payout_claim($1, $2, 'pending', $3::jsonb, $4::jsonb)`, [
        account,
        runId,
        JSON.stringify(items),
        trace === undefined ? null : JSON.stringify(trace),
      ]),
    );
    if (claims.length !== items.length) throw new Error(`the ledger answered ${claims.length} of ${items.length} items`);
    if (claims.some((claim) => claim.verdict === 'queued')) {
      // Delivered when the transaction commits, and never if it rolls back.
      await db.query('SELECT pg_notify($1, $2)', [channel, account]);
    }
    return claims.map((claim) => ({
      verdict: claim.verdict === 'queued' ? 'pending' : claim.verdict === 'already' ? 'already' : 'conflict',
      runId: String(claim.run_id),
    }));
  }

  async movePending(limit: number, add: (payouts: readonly PayoutPendingRow[]) => Promise<void>): Promise<number> {
    const { pool, schema, account } = this.target;
    const table = `${schema}.payouts`;
    const client = await pool.connect();
    // A connection whose rollback failed is broken: it is not given back to the pool for another use.
    let broken = false;
    try {
      await client.query('BEGIN');
      // SKIP LOCKED: rows another relay holds are left to it, so that no two relays move one row.
      const { rows } = await client.query<PendingRow>(
        `SELECT request_id, run_id, request, trace FROM ${table}
         WHERE account = $1 AND state = 'pending'
         ORDER BY created_at, request_id
         LIMIT $2
         FOR UPDATE SKIP LOCKED`,
        [account, limit],
      );
      if (rows.length > 0) {
        await add(
          rows.map((row) => ({
            requestId: row.request_id,
            runId: row.run_id,
            request: row.request,
            trace: row.trace ?? undefined,
          })),
        );
        await client.query(
          `UPDATE ${table} SET state = 'queued', queued_at = now(), state_since = now()
           WHERE account = $1 AND request_id = ANY($2::text[]) AND state = 'pending'`,
          [account, rows.map((row) => row.request_id)],
        );
      }
      await client.query('COMMIT');
      return rows.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async listenPending(onPending: () => void, onError: (error: Error) => void): Promise<PayoutPendingSubscription> {
    const { pool, channel, account } = this.target;
    const client: PoolClient = await pool.connect();
    let closed = false;
    const onNotification = (message: { channel: string; payload?: string }) => {
      if (message.channel === channel && message.payload === account) onPending();
    };
    const fail = (error: Error) => {
      if (closed) return;
      closed = true;
      client.off('notification', onNotification);
      client.release(error);
      onError(error);
    };
    client.on('notification', onNotification);
    client.on('error', fail);
    try {
      await client.query(`LISTEN ${quoteIdentifier(channel)}`);
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    return {
      close: async () => {
        if (closed) return;
        closed = true;
        client.off('notification', onNotification);
        client.off('error', fail);
        // Not reused: a pooled connection still listening would get notifications nobody reads.
        client.release(true);
      },
    };
  }
}

interface PendingRow {
  request_id: string;
  run_id: string;
  request: Record<string, unknown>;
  trace: Record<string, string> | null;
}

/** The rows of a driver's result: the array itself (TypeORM, MikroORM) or its `rows` (pg, Knex, Kysely, Drizzle). */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  const rows = (result as { rows?: unknown } | null | undefined)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
