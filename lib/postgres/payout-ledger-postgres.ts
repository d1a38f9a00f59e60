import { booleanOption } from '../common/boolean-option.js';
import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { wholeNumberInRange } from '../common/whole-number-option.js';
import { type PayoutLedgerFactory, PayoutsConfigError } from '../index.js';
import { PostgresPayoutLedger } from './postgres-payout-ledger.js';
import type { PostgresPool } from './postgres-pool.js';

/** The options of `payoutLedgerPostgres()`. */
export interface PayoutLedgerPostgresOptions {
  /** The app's node-postgres `Pool` (`npm install pg`); the app ends it on shutdown, after the payout runs stop. */
  pool: PostgresPool;
  /** The schema of the ledger's tables, created by the migrate command. Default `'nestjs_payouts'`. */
  schema?: string;
  /**
   * Create or upgrade the tables at boot, under a lock (instances starting together migrate once). Default `false`:
   * the boot refuses a missing or older schema, naming `npx nestjs-payouts postgres migrate`.
   */
  migrate?: boolean;
  /**
   * How long one statement of the ledger may take, connecting included: past it, the call rejects with
   * `PayoutLedgerUnavailableError` (an `enqueue()` within about this per chunk of 500). Default `5000`.
   */
  timeoutMs?: number;
  /**
   * Delete payouts sent or refused more than this many days ago, at boot and once an hour, on each instance. Default:
   * never (the table is the audit trail).
   */
  retentionDays?: number;
  /**
   * Prepare the statements each payout runs (its mark, its outcome, its run's completion) once per connection, rather
   * than have PostgreSQL parse and plan them at every call. Default `true`. `false` behind a pooler in transaction
   * mode that does not keep prepared statements (PgBouncer before 1.21, or without `max_prepared_statements`).
   */
  preparedStatements?: boolean;
}

/** The options after validation. */
export interface PayoutLedgerPostgresConfig {
  readonly pool: PostgresPool;
  readonly schema: string;
  readonly migrate: boolean;
  readonly timeoutMs: number;
  readonly retentionDays: number | undefined;
  readonly preparedStatements: boolean;
}

const OWNER = 'payoutLedgerPostgres';
const KEYS = optionKeys<PayoutLedgerPostgresOptions>()(
  'pool',
  'schema',
  'migrate',
  'timeoutMs',
  'retentionDays',
  'preparedStatements',
);
/** A name PostgreSQL takes unquoted, so that operators type it as it is written here. */
const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * PostgreSQL as the ledger of payout runs: `PayoutRunsModule.forRoot({ …, ledger: payoutLedgerPostgres({ pool }) })`.
 * The "sending" mark of each payout is committed there before its request leaves, so that no loss of Redis data
 * sends a payout twice. See docs/payout-ledger.md.
 */
export function payoutLedgerPostgres(options: PayoutLedgerPostgresOptions): PayoutLedgerFactory {
  const config = resolveOptions(options);
  return { kind: 'postgres', create: ({ account }) => new PostgresPayoutLedger(config, account) };
}

function resolveOptions(options: PayoutLedgerPostgresOptions): PayoutLedgerPostgresConfig {
  if (options === null || typeof options !== 'object') {
    throw new PayoutsConfigError('options', 'an object with pool', OWNER);
  }
  rejectUnknownKeys(options, KEYS, '', OWNER);
  const { pool, schema = 'nestjs_payouts' } = options;
  if (pool === null || typeof pool !== 'object' || typeof (pool as { connect?: unknown }).connect !== 'function') {
    throw new PayoutsConfigError(
      'pool',
      'a pool of node-postgres (npm install pg; new Pool({ connectionString }))',
      OWNER,
    );
  }
  if (typeof schema !== 'string' || !SCHEMA.test(schema)) {
    throw new PayoutsConfigError('schema', 'a lower-case name of letters, digits and "_", such as "payouts"', OWNER);
  }
  const migrate = booleanOption('migrate', options.migrate, false, OWNER);
  const preparedStatements = booleanOption('preparedStatements', options.preparedStatements, true, OWNER);
  return {
    pool,
    schema,
    migrate,
    timeoutMs: whole('timeoutMs', options.timeoutMs, 5000, 100, 600_000),
    // No default: without it, settled rows are kept.
    retentionDays:
      options.retentionDays === undefined
        ? undefined
        : whole('retentionDays', options.retentionDays, undefined, 1, 100_000),
    preparedStatements,
  };
}

const whole = (name: string, value: unknown, fallback: number | undefined, min: number, max: number) =>
  wholeNumberInRange(name, value, fallback, min, max, OWNER);
