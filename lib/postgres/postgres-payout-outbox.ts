import { withDeadline } from '../common/with-deadline.js';
import { PayoutLedgerUnavailableError } from '../index.js';
import type {
  PayoutLedgerOutbox,
  PayoutLedgerTransaction,
  PayoutPendingItem,
  PayoutPendingRow,
  PayoutPendingSubscription,
  PayoutPendingWrite,
} from '../index.js';
import type { PayoutLedgerPostgresConfig } from './payout-ledger-postgres.js';
import { quotedSchema } from './payout-ledger-schema.js';
import type { PostgresPoolClient } from './postgres-pool.js';
import { withConnection } from './postgres-statement.js';

/** How long the relay's `add` may take (the queue's Redis away): its own deadline, the move's on top of the SQL's. */
export const OUTBOX_ADD_ALLOWANCE_MS = 10_000;

/** A pooled connection that can listen: node-postgres's `PoolClient`. */
interface ListeningClient extends PostgresPoolClient {
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

class QueueFailed extends Error {}

/**
 * The outbox of the PostgreSQL ledger. Writes go through the caller's transaction with SQL that any driver runs as
 * given: text parameters only (the items as one JSON document), each `$n` used once and in order, and no `?`, so that
 * an adapter for a library with `?` placeholders (Knex) only swaps the markers. The relays move rows over the
 * ledger's own pool.
 */
export class PostgresPayoutOutbox implements PayoutLedgerOutbox {
  private readonly s: string;
  /** The channel the relays of every account of this schema listen on; the payload names the account. */
  private readonly channel: string;

  constructor(
    private readonly config: PayoutLedgerPostgresConfig,
    private readonly account: string,
  ) {
    this.s = quotedSchema(config.schema);
    // A channel's name is an identifier: 63 bytes at most (the schema's name is ASCII, up to 63 characters itself).
    this.channel = `${config.schema}.pending`.slice(0, 63);
  }

  async writePending(
    db: PayoutLedgerTransaction,
    runId: string,
    items: readonly PayoutPendingItem[],
    trace: Readonly<Record<string, string>> | undefined,
  ): Promise<PayoutPendingWrite[]> {
    if (items.length === 0) return [];
    // The ledger's own claim, as enqueue() without `db` runs it, here in the caller's transaction and as 'pending': a
    // request_id already in the ledger (committed, or written earlier in this transaction) is left as it is, and one
    // that another transaction is writing at the same time makes this one wait for its outcome.
    const claims = rowsOf(
      await this.within(
        db.query(`SELECT verdict, run_id FROM ${this.s}.payout_claim($1, $2, 'pending', $3::jsonb, $4::jsonb)`, [
          this.account,
          runId,
          JSON.stringify(items),
          trace === undefined ? null : JSON.stringify(trace),
        ]),
      ),
    );
    if (claims.length !== items.length) {
      throw new Error(`The payout ledger answered for ${claims.length} of ${items.length} payouts`);
    }
    if (claims.some((claim) => claim.verdict === 'queued')) {
      // Delivered when the transaction commits, and never if it rolls back.
      await this.within(db.query('SELECT pg_notify($1, $2)', [this.channel, this.account]));
    }
    return claims.map((claim) => ({
      verdict: claim.verdict === 'queued' ? 'pending' : claim.verdict === 'already' ? 'already' : 'conflict',
      runId: String(claim.run_id),
    }));
  }

  async movePending(limit: number, add: (payouts: readonly PayoutPendingRow[]) => Promise<void>): Promise<number> {
    const table = `${this.s}.payouts`;
    let queueError: unknown;
    try {
      return await withConnection(
        this.config.pool,
        this.config.timeoutMs + OUTBOX_ADD_ALLOWANCE_MS,
        'move pending payouts to the queue',
        true,
        async (client) => {
          await client.query('BEGIN');
          // SKIP LOCKED: rows another relay holds are left to it, so that no two relays move one row.
          const { rows } = await client.query(
            `SELECT request_id, run_id, request::text AS request, trace::text AS trace FROM ${table}
             WHERE account = $1 AND state = 'pending'
             ORDER BY created_at, request_id
             LIMIT $2
             FOR UPDATE SKIP LOCKED`,
            [this.account, limit],
          );
          if (rows.length > 0) {
            try {
              await add(
                rows.map((row) => ({
                  requestId: String(row.request_id),
                  runId: String(row.run_id),
                  request: JSON.parse(String(row.request)) as Record<string, unknown>,
                  trace: row.trace === null ? undefined : (JSON.parse(String(row.trace)) as Record<string, string>),
                })),
              );
            } catch (error) {
              queueError = error;
              await client.query('ROLLBACK');
              throw new QueueFailed();
            }
            // A worker that took a job up already waits on these rows' locks, and finds them queued.
            await client.query(
              `UPDATE ${table} SET state = 'queued', queued_at = now(), state_since = now()
               WHERE account = $1 AND request_id = ANY($2::text[]) AND state = 'pending'`,
              [this.account, rows.map((row) => String(row.request_id))],
            );
          }
          await client.query('COMMIT');
          return rows.length;
        },
      );
    } catch (error) {
      // The queue's failure as it is, rather than as the ledger's.
      if (queueError !== undefined) throw queueError;
      throw error;
    }
  }

  async listenPending(onPending: () => void, onError: (error: Error) => void): Promise<PayoutPendingSubscription> {
    const { pool, timeoutMs } = this.config;
    const noReply = () => new Error(`no reply within timeoutMs (${timeoutMs} ms)`);
    const connecting = pool.connect() as Promise<ListeningClient>;
    const client = await withDeadline(connecting, timeoutMs, noReply).catch((error: unknown) => {
      connecting.then(
        (late) => late.release(true),
        () => undefined,
      );
      throw error;
    });
    if (typeof client.on !== 'function') {
      client.release();
      throw new Error('The pool of payoutLedgerPostgres() gives connections that cannot LISTEN: pass a pg Pool');
    }
    let closed = false;
    const onNotification = (message: { channel: string; payload?: string }) => {
      if (message.channel === this.channel && message.payload === this.account) onPending();
    };
    const end = (error: Error | true) => {
      closed = true;
      client.off('notification', onNotification);
      client.off('error', fail);
      // Its socket may still report a failure once closed: heard, so that it does not end the process.
      client.on('error', () => undefined);
      // Not handed back for reuse: a pooled connection still listening would get notifications nobody reads.
      client.release(error);
    };
    const fail = (error: Error) => {
      if (closed) return;
      end(error);
      onError(error);
    };
    client.on('notification', onNotification);
    client.on('error', fail);
    try {
      await withDeadline(client.query(`LISTEN "${this.channel}"`), timeoutMs, noReply);
    } catch (error) {
      end(error instanceof Error ? error : true);
      throw error;
    }
    return {
      close: async () => {
        if (!closed) end(true);
      },
    };
  }

  /** The caller's statement, bounded by the ledger's `timeoutMs`; the caller rolls its transaction back. */
  private within<T>(statement: Promise<T> | PromiseLike<T>): Promise<T> {
    const { timeoutMs } = this.config;
    return withDeadline(
      Promise.resolve(statement),
      timeoutMs,
      () =>
        new PayoutLedgerUnavailableError(
          'write pending payouts in the given transaction',
          'timeout',
          'unknown',
          `no reply within timeoutMs (${timeoutMs} ms); roll the transaction back`,
        ),
    );
  }
}

/** The rows of a driver's result: the array itself (TypeORM, MikroORM) or its `rows` (pg, Knex, Kysely, Drizzle). */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  const rows = (result as { rows?: unknown } | null | undefined)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}
