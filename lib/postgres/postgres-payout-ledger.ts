import type {
  PayoutLedger,
  PayoutLedgerBegin,
  PayoutLedgerClaim,
  PayoutLedgerCounts,
  PayoutLedgerDecision,
  PayoutLedgerRecord,
  PayoutLedgerState,
  PayoutLedgerUnsettled,
} from '../index.js';
import type { PayoutLedgerPostgresConfig } from './payout-ledger-postgres.js';
import { checkPayoutLedgerSchema, migratePayoutLedger, quotedSchema } from './payout-ledger-schema.js';
import type { PostgresPoolClient } from './postgres-pool.js';
import { PostgresPayoutOutbox } from './postgres-payout-outbox.js';
import { type LedgerStatement, ledgerStatement, withConnection } from './postgres-statement.js';

const HOUR_MS = 3_600_000;
const EPOCH_MS = (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint::text`;
const ISO = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The ledger of one account's payout runs in PostgreSQL: a row per payout, moved from state to state by the schema's
 * functions, each one committed statement. jsonb and timestamps are read back as text, so that the app's own type
 * parsers on a shared pool change nothing.
 */
export class PostgresPayoutLedger implements PayoutLedger {
  readonly durable = true;
  readonly outbox: PostgresPayoutOutbox;
  private readonly s: string;
  /** The three statements of every payout. */
  private readonly perPayout: Readonly<Record<'begin' | 'settle' | 'complete', LedgerStatement>>;
  private pruning: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: PayoutLedgerPostgresConfig,
    private readonly account: string,
  ) {
    this.s = quotedSchema(config.schema);
    this.outbox = new PostgresPayoutOutbox(config, account);
    const statement = (purpose: string, text: string) => ledgerStatement(purpose, text, config.preparedStatements);
    this.perPayout = {
      begin: statement(
        'begin',
        `SELECT step, attempt, resolution_decision, resolved_by, resolution_note, resolved_at ` +
          `FROM ${this.s}.payout_begin($1, $2, $3, $4)`,
      ),
      settle: statement('settle', `SELECT ${this.s}.payout_settle($1, $2, $3, $4, $5::jsonb) AS verdict`),
      complete: statement('complete', `SELECT ${this.s}.payout_run_complete($1, $2) AS verdict`),
    };
  }

  async open(): Promise<void> {
    const { schema, migrate, retentionDays } = this.config;
    await this.connection('check its schema', migrate, async (client) => {
      if (migrate) await migratePayoutLedger(client, schema);
      else await checkPayoutLedgerSchema(client, schema);
    });
    if (retentionDays !== undefined) {
      // At boot, then hourly; a failed pass (the database away) waits for the next.
      const prune = () => void this.prune(retentionDays).catch(() => undefined);
      this.pruning = setInterval(prune, HOUR_MS);
      this.pruning.unref();
      prune();
    }
  }

  async close(): Promise<void> {
    clearInterval(this.pruning);
    this.pruning = undefined;
  }

  async claim(
    runId: string,
    items: readonly { requestId: string; fingerprint: string; request: Readonly<Record<string, unknown>> }[],
  ): Promise<PayoutLedgerClaim[]> {
    const rows = await this.query(
      'record the payouts',
      true,
      `SELECT verdict, state, run_id FROM ${this.s}.payout_claim($1, $2, 'queued', $3::jsonb, NULL)`,
      [this.account, runId, JSON.stringify(items)],
    );
    return rows.map((row) => ({
      verdict: row.verdict as PayoutLedgerClaim['verdict'],
      state: row.state as PayoutLedgerState,
      runId: String(row.run_id),
    }));
  }

  async begin(requestId: string, _runId: string, token: string, takeOver: boolean): Promise<PayoutLedgerBegin> {
    return this.connection('mark a payout as sending', true, async (client) => {
      const [row] = (
        await client.query({ ...this.perPayout.begin, values: [this.account, requestId, token, takeOver] })
      ).rows;
      const step = row!.step as 'send' | 'missing' | 'interrupted' | 'settled';
      // Settled already: its worker may have stopped between recording the outcome and completing the run.
      if (step === 'settled') await this.completeRun(client, requestId);
      if (step !== 'send') return { step };
      return { step, attempt: Number(row!.attempt), resolution: resolutionOf(row!) };
    });
  }

  async settle(
    requestId: string,
    _runId: string,
    token: string,
    state: 'retrying' | 'sent' | 'refused' | 'unknown',
    outcome: object,
  ): Promise<'settled' | 'completed' | 'lost'> {
    return this.connection('record a payout outcome', true, async (client) => {
      const { rows } = await client.query({
        ...this.perPayout.settle,
        values: [this.account, requestId, token, state, JSON.stringify(outcome)],
      });
      const verdict = rows[0]!.verdict as 'settled' | 'last' | 'lost';
      if (verdict !== 'last') return verdict;
      // Its own statement, once the outcome is committed (see payout_run_complete). Should it fail, the caller records
      // the outcome again, which finds it written and asks this again.
      return this.completeRun(client, requestId);
    });
  }

  /** Completes the run of a settled payout when nothing of it is left to send. */
  private async completeRun(client: PostgresPoolClient, requestId: string): Promise<'settled' | 'completed'> {
    const { rows } = await client.query({ ...this.perPayout.complete, values: [this.account, requestId] });
    return rows[0]!.verdict as 'settled' | 'completed';
  }

  async resolve(
    requestId: string,
    _runId: string,
    decision: 'sent' | 'absent',
    resolution: object,
  ): Promise<'resolved' | 'missing' | PayoutLedgerState> {
    const { by, note, at } = resolution as { by?: string; note?: string; at: string };
    const [row] = await this.query(
      'resolve a payout',
      true,
      `SELECT ${this.s}.payout_resolve($1, $2, $3, $4, $5, $6::timestamptz) AS verdict`,
      [this.account, requestId, decision, by ?? null, note ?? null, at],
    );
    return row!.verdict as 'resolved' | 'missing' | PayoutLedgerState;
  }

  async sweepLock(step: 'acquire' | 'renew' | 'release', token: string, leaseMs: number): Promise<boolean> {
    const lease = `clock_timestamp() + make_interval(secs => $3::double precision / 1000)`;
    const sql = {
      acquire:
        `INSERT INTO ${this.s}.sweep_locks AS l (account, token, expires_at) VALUES ($1, $2, ${lease}) ` +
        `ON CONFLICT (account) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at ` +
        `WHERE l.expires_at <= clock_timestamp() RETURNING 1`,
      renew:
        `UPDATE ${this.s}.sweep_locks SET expires_at = ${lease} ` +
        `WHERE account = $1 AND token = $2 AND expires_at > clock_timestamp() AND $3::integer >= 0 RETURNING 1`,
      release: `DELETE FROM ${this.s}.sweep_locks WHERE account = $1 AND token = $2 AND $3::integer >= 0 RETURNING 1`,
    }[step];
    const rows = await this.query(`${step} the sweep lock`, true, sql, [this.account, token, leaseMs]);
    return rows.length === 1;
  }

  /** Once per parking: a decision clears `given_up_at`, so a payout parked again can be given up on again. */
  async recordGiveUp(requestId: string, _parkedSince: number): Promise<boolean> {
    const rows = await this.query(
      'record a payout given up on',
      true,
      `UPDATE ${this.s}.payouts SET given_up_at = now() ` +
        `WHERE account = $1 AND request_id = $2 AND state = 'unknown' AND given_up_at IS NULL RETURNING 1`,
      [this.account, requestId],
    );
    return rows.length === 1;
  }

  async read(requestId: string): Promise<PayoutLedgerRecord | undefined> {
    const [row] = await this.query(
      'read a payout',
      false,
      `SELECT request_id, run_id, state, attempt, outcome::text AS outcome, handled::text AS handled, completes_run, ` +
        `resolution_decision, resolved_by, resolution_note, ${ISO('resolved_at')} AS resolved_at, ` +
        `${EPOCH_MS('state_since')} AS since, request::text AS request ` +
        `FROM ${this.s}.payouts WHERE account = $1 AND request_id = $2`,
      [this.account, requestId],
    );
    if (!row) return undefined;
    return {
      requestId: String(row.request_id),
      runId: String(row.run_id),
      state: row.state as PayoutLedgerState,
      attempt: Number(row.attempt),
      outcome: row.outcome === null ? undefined : String(row.outcome),
      handled: JSON.parse(String(row.handled)) as string[],
      completesRun: row.completes_run === true,
      resolution: resolutionOf(row),
      since: Number(row.since),
      request: JSON.parse(String(row.request)) as Record<string, unknown>,
    };
  }

  async markHandled(requestId: string, handled: readonly string[]): Promise<void> {
    await this.query(
      'record the result handlers run',
      true,
      `UPDATE ${this.s}.payouts SET handled = $3::jsonb WHERE account = $1 AND request_id = $2`,
      [this.account, requestId, JSON.stringify(handled)],
    );
  }

  async counts(runId: string): Promise<PayoutLedgerCounts | undefined> {
    const [row] = await this.query(
      "read a run's counts",
      false,
      `SELECT (SELECT coalesce(json_object_agg(c.state, c.n), '{}')::text FROM (SELECT state, count(*) AS n ` +
        `FROM ${this.s}.payouts WHERE account = $1 AND run_id = $2 GROUP BY state) c) AS counts, ` +
        `(SELECT ${EPOCH_MS('completed_at')} FROM ${this.s}.payout_runs WHERE account = $1 AND run_id = $2) ` +
        `AS completed_at`,
      [this.account, runId],
    );
    const byState = JSON.parse(String(row!.counts)) as Partial<Record<PayoutLedgerState, number>>;
    const total = Object.values(byState).reduce((sum, n) => sum + n, 0);
    if (total === 0) return undefined;
    const counts = {
      queued: (byState.pending ?? 0) + (byState.queued ?? 0),
      sending: byState.sending ?? 0,
      retrying: byState.retrying ?? 0,
      sent: byState.sent ?? 0,
      refused: byState.refused ?? 0,
      unknown: byState.unknown ?? 0,
      total,
    };
    return { counts, ...(row!.completed_at !== null && { completedAt: Number(row!.completed_at) }) };
  }

  async unknown(offset: number, limit: number): Promise<{ total: number; requestIds: string[] }> {
    const [row] = await this.query(
      'list the unknown outcomes',
      false,
      `SELECT (SELECT count(*) FROM ${this.s}.payouts WHERE account = $1 AND state = 'unknown')::integer AS total, ` +
        `(SELECT coalesce(json_agg(u.request_id ORDER BY u.state_since, u.request_id), '[]')::text FROM ` +
        `(SELECT request_id, state_since FROM ${this.s}.payouts WHERE account = $1 AND state = 'unknown' ` +
        `ORDER BY state_since, request_id OFFSET $2 LIMIT $3) u) AS ids`,
      [this.account, offset, limit],
    );
    return { total: Number(row!.total), requestIds: JSON.parse(String(row!.ids)) as string[] };
  }

  async decisionsAwaitingJobs(olderThanMs: number, limit: number): Promise<PayoutLedgerDecision[]> {
    // Decided absent: queued until its job begins to send it; decided sent: until its job finds it settled.
    const rows = await this.query(
      'list the decisions awaiting their jobs',
      false,
      `SELECT request_id, resolution_decision FROM ${this.s}.payouts WHERE account = $1 ` +
        `AND ((state = 'queued' AND resolution_decision = 'absent') OR awaits_job) ` +
        `AND state_since < now() - make_interval(secs => $2::double precision / 1000) ` +
        `ORDER BY state_since, request_id LIMIT $3`,
      [this.account, olderThanMs, limit],
    );
    return rows.map((row) => ({
      requestId: String(row.request_id),
      decision: row.resolution_decision as 'sent' | 'absent',
    }));
  }

  async unsettled(olderThanMs: number, after: string, limit: number): Promise<PayoutLedgerUnsettled[]> {
    const rows = await this.query(
      'list the unsettled payouts',
      false,
      `SELECT request_id, run_id, state, request::text AS request FROM ${this.s}.payouts ` +
        `WHERE account = $1 AND state IN ('queued', 'sending', 'retrying') AND request_id > $2 ` +
        `AND state_since < now() - make_interval(secs => $3::double precision / 1000) ` +
        `ORDER BY request_id LIMIT $4`,
      [this.account, after, olderThanMs, limit],
    );
    return rows.map((row) => ({
      requestId: String(row.request_id),
      runId: String(row.run_id),
      state: row.state as PayoutLedgerState,
      request: JSON.parse(String(row.request)) as Record<string, unknown>,
    }));
  }

  async ping(): Promise<void> {
    await this.query('answer a ping', false, 'SELECT 1', []);
  }

  /** Deletes the payouts sent or refused more than `days` ago, every account's: the table is shared. */
  private async prune(days: number): Promise<void> {
    await this.query(
      'prune settled payouts',
      true,
      `DELETE FROM ${this.s}.payouts WHERE state IN ('sent', 'refused') ` +
        `AND settled_at < now() - make_interval(days => $1::integer)`,
      [days],
    );
  }

  private query(
    operation: string,
    writes: boolean,
    text: string,
    values: unknown[],
  ): Promise<Record<string, unknown>[]> {
    return this.connection(operation, writes, async (client) => (await client.query(text, values)).rows);
  }

  private connection<T>(operation: string, writes: boolean, work: (client: PostgresPoolClient) => Promise<T>) {
    return withConnection(this.config.pool, this.config.timeoutMs, operation, writes, work);
  }
}

/** The decision on an unknown outcome as payout runs store it (JSON, the keys in this order), or none. */
function resolutionOf(row: Record<string, unknown>): string | undefined {
  if (row.resolution_decision === null || row.resolution_decision === undefined) return undefined;
  return JSON.stringify({
    decision: row.resolution_decision,
    ...(row.resolved_by !== null && { by: row.resolved_by }),
    ...(row.resolution_note !== null && { note: row.resolution_note }),
    at: row.resolved_at,
  });
}
