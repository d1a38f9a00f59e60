import type { ConnectionOptions } from 'bullmq';
import { booleanOption } from '../common/boolean-option.js';
import { ConfigProblems } from '../common/config-problems.js';
import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { wholeNumberInRange } from '../common/whole-number-option.js';
import { REDIS_CONNECTION_EXPECTED, redisConnectionOption } from '../common/redis-connection-option.js';
import { type PayoutLedgerFactory, PayoutsConfigError } from '../index.js';
import {
  type PayoutReconcileConfig,
  type PayoutReconcileOptions,
  resolveReconcileOptions,
} from './payout-reconcile-options.js';

/** At most how many payouts a run sends per window, across every worker of the account. */
export interface PayoutRunsRateLimit {
  /** Payouts per `durationMs`. */
  max: number;
  durationMs: number;
  /**
   * Split the window into this many smaller ones, each allowing its share, so that no sliding window of `durationMs`
   * holds much more than `max` (a limiter counts per fixed window: two full windows can meet at a boundary). Default:
   * as many as keep each at least one payout, up to 10, which keeps any sliding window within about 1.1 × `max`.
   */
  slices?: number;
}

/** The options of `PayoutRunsModule.forRoot()`. */
export interface PayoutRunsOptions {
  /** The `PayoutsModule` registration whose payouts these runs send: its `name`. Default: the unnamed one. */
  account?: string;
  /**
   * How BullMQ reaches Redis: a `redis://[user:password@]host:port[/db]` URL (`rediss://` for TLS), connection options
   * such as `{ host, port, password, tls }` (on bullmq 6 the `ioredis` package must be installed for either), or a
   * client of your own, such as an ioredis `Cluster`.
   */
  connection: ConnectionOptions | string;
  /**
   * BullMQ's key prefix: the keys are `<prefix>:payout-runs[-<account>]:…`. Default `'bull'`. On a Redis Cluster it
   * must hold a hash tag, such as `'{payouts}'`, so that a queue's keys share a slot.
   */
  prefix?: string;
  /** The provider's limit, shared by every worker of the account; `false` for none. */
  rateLimit: PayoutRunsRateLimit | false;
  /** Payouts a worker sends at once. Default `10`. */
  concurrency?: number;
  /**
   * How long a `request_id` is remembered, so that enqueueing it again adds nothing (and a different body under it is
   * refused). Default 30 days.
   */
  dedupeWindowMs?: number;
  /**
   * Attempts of a payout whose requests surely were not processed (no connection), the first included, before it is
   * refused; also the runs of result handlers that throw. Default `5`.
   */
  attempts?: number;
  /** The wait before the first such retry, doubled before each further one; also the pause after a `429` or `503`
   * without `Retry-After`. Default `5000`. */
  backoffMs?: number;
  /** Run a worker here, which sends the payouts. `false` for an instance that only enqueues. Default `true`. */
  worker?: boolean;
  /**
   * How long a worker holds a payout without renewing its lock (it renews it while sending); a payout whose worker died
   * is taken up by another once its lock has expired, and parked as unknown if it had begun to send. Also how often each
   * worker checks for payouts whose job Redis failed to queue again, or, with a durable ledger, lost. Default `30000`.
   */
  lockDurationMs?: number;
  /**
   * How long shutdown waits for the payouts being sent, and, beside them, for the reconciliation sweep and the job
   * check under way (see `lockDurationMs`), before it lets the process go. Default `30000`.
   */
  shutdownTimeoutMs?: number;
  /**
   * How long `enqueue()` waits for each reply of Redis (a chunk's claim, a chunk's add) before it rejects with a
   * `PayoutRunEnqueueError`, also while the connection is still being made. `progress()`, `listUnknown()` and
   * `resolveUnknown()` wait as long for each of theirs. Default `10000`.
   */
  enqueueTimeoutMs?: number;
  /**
   * A Redis `maxmemory-policy` other than `noeviction` that you accept, such as `'allkeys-lru'`: without it a worker
   * refuses to start on a Redis that may evict keys, as an evicted payout's record could let it be sent twice. Use
   * `'unknown'` for a Redis whose `INFO` does not say. Default: none (only `noeviction`).
   */
  acceptEvictionPolicy?: string;
  /**
   * Set only for a provider that documents deduplicating `request_id`: an unknown outcome is then retried with the
   * same `request_id`, within `attempts`, instead of parked. Default `false`.
   */
  providerDedupesRequestId?: boolean;
  /**
   * Settle unknown outcomes in code: a `lookup` that asks the provider, swept on the instances that run a worker. See
   * "Reconciling unknown outcomes in code" in docs/health-and-reconciliation.md. Default: none (they wait for
   * `resolveUnknown()` or the CLI).
   */
  reconcile?: PayoutReconcileOptions;
  /**
   * How often, at most, `@OnPayoutRunProgress()` handlers hear of each run that this instance's worker sends payouts
   * of. Default `1000`.
   */
  progressIntervalMs?: number;
  /**
   * Where the record of every payout lives (the "sending" mark, the outcome, the run's counts): PostgreSQL with
   * `payoutLedgerPostgres({ pool })` of `nestjs-payouts/postgres`, which no loss of Redis data can make send a payout
   * twice. See docs/payout-ledger.md. Default: Redis, beside the queue, kept for `dedupeWindowMs`.
   */
  ledger?: PayoutLedgerFactory;
}

/** The options after validation, with every default filled in. */
export interface PayoutRunsConfig {
  readonly account: string | undefined;
  readonly connection: ConnectionOptions;
  readonly prefix: string;
  /** The limiter BullMQ gets: a slice of the window. */
  readonly limiter: { readonly max: number; readonly duration: number };
  readonly rateLimited: boolean;
  readonly concurrency: number;
  readonly dedupeWindowMs: number;
  readonly attempts: number;
  readonly backoffMs: number;
  readonly worker: boolean;
  readonly lockDurationMs: number;
  readonly shutdownTimeoutMs: number;
  readonly enqueueTimeoutMs: number;
  readonly acceptEvictionPolicy: string | undefined;
  readonly providerDedupesRequestId: boolean;
  readonly reconcile: PayoutReconcileConfig | undefined;
  readonly progressIntervalMs: number;
  readonly ledger: PayoutLedgerFactory | undefined;
}

/** Whose options these are, in the message of a `PayoutsConfigError`. */
export const RUNS_OWNER = 'PayoutRunsModule';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** BullMQ's limiter needs a maximum for `rateLimit()` (a `429` pause) to hold; this one never binds. */
const UNLIMITED = { max: 1_000_000_000, duration: 1000 };
const OPTION_KEYS = optionKeys<PayoutRunsOptions>()(
  'account',
  'connection',
  'prefix',
  'rateLimit',
  'concurrency',
  'dedupeWindowMs',
  'attempts',
  'backoffMs',
  'worker',
  'lockDurationMs',
  'shutdownTimeoutMs',
  'enqueueTimeoutMs',
  'acceptEvictionPolicy',
  'providerDedupesRequestId',
  'reconcile',
  'progressIntervalMs',
  'ledger',
);
const RATE_LIMIT_KEYS = optionKeys<PayoutRunsRateLimit>()('max', 'durationMs', 'slices');

/**
 * Checks the options at bootstrap, so a bad one stops it, naming every option that is wrong at once; never echoes a
 * value.
 */
export function resolvePayoutRunsOptions(options: PayoutRunsOptions): PayoutRunsConfig {
  if (options === null || typeof options !== 'object') {
    throw new PayoutsConfigError('options', 'an object with connection and rateLimit', RUNS_OWNER);
  }
  const problems = new ConfigProblems(options, OPTION_KEYS, RUNS_OWNER);
  const account = problems.check(() => resolveAccount(options.account));
  const connection = problems.check(() => resolveConnection(options.connection));
  const config: PayoutRunsConfig = {
    account,
    connection,
    prefix: problems.check(() => resolvePrefix(options.prefix, connection)),
    ...problems.check(() => limiterOf(options.rateLimit)),
    concurrency: problems.check(() => whole('concurrency', options.concurrency, 10, 1, 1000)),
    dedupeWindowMs: problems.check(() =>
      whole('dedupeWindowMs', options.dedupeWindowMs, 30 * DAY_MS, 1000, 400 * DAY_MS),
    ),
    attempts: problems.check(() => whole('attempts', options.attempts, 5, 1, 1000)),
    backoffMs: problems.check(() => whole('backoffMs', options.backoffMs, 5000, 1, DAY_MS)),
    worker: problems.check(() => booleanOption('worker', options.worker, true, RUNS_OWNER)),
    lockDurationMs: problems.check(() => whole('lockDurationMs', options.lockDurationMs, 30_000, 100, 10 * MINUTE_MS)),
    shutdownTimeoutMs: problems.check(() =>
      whole('shutdownTimeoutMs', options.shutdownTimeoutMs, 30_000, 0, 10 * MINUTE_MS),
    ),
    enqueueTimeoutMs: problems.check(() =>
      whole('enqueueTimeoutMs', options.enqueueTimeoutMs, 10_000, 1, 10 * MINUTE_MS),
    ),
    acceptEvictionPolicy: problems.check(() => resolveEvictionPolicy(options.acceptEvictionPolicy)),
    providerDedupesRequestId: problems.check(() =>
      booleanOption('providerDedupesRequestId', options.providerDedupesRequestId, false, RUNS_OWNER),
    ),
    reconcile: problems.check(() => resolveReconcileOptions(options.reconcile)),
    progressIntervalMs: problems.check(() =>
      whole('progressIntervalMs', options.progressIntervalMs, 1000, 100, 10 * MINUTE_MS),
    ),
    ledger: problems.check(() => resolveLedger(options.ledger)),
  };
  // After the checks of each option, which name a known one spelt otherwise as missing.
  problems.checkUnknownKeys();
  problems.throwIfAny();
  return config;
}

function resolveAccount(account: unknown): string | undefined {
  if (account !== undefined && (typeof account !== 'string' || !/^[A-Za-z0-9][\w.-]{0,62}$/.test(account))) {
    throw new PayoutsConfigError('account', 'the name of a PayoutsModule registration', RUNS_OWNER);
  }
  return account;
}

function resolveConnection(connection: unknown): ConnectionOptions {
  const resolved = redisConnectionOption<ConnectionOptions>(connection);
  if (resolved === undefined) throw new PayoutsConfigError('connection', REDIS_CONNECTION_EXPECTED, RUNS_OWNER);
  return resolved;
}

/** `connection` is `undefined` when it is wrong itself: the prefix is then checked alone. */
function resolvePrefix(prefix: unknown = 'bull', connection: ConnectionOptions | undefined): string {
  if (typeof prefix !== 'string' || prefix === '' || prefix.includes(':')) {
    throw new PayoutsConfigError('prefix', 'a non-empty string without ":", such as "bull"', RUNS_OWNER);
  }
  if (connection !== undefined && isCluster(connection) && !/\{[^{}]+\}/.test(prefix)) {
    throw new PayoutsConfigError(
      'prefix',
      'a prefix with a hash tag, such as "{payouts}", with a Redis Cluster connection: the keys of a queue must share a slot',
      RUNS_OWNER,
    );
  }
  return prefix;
}

function resolveLedger(ledger: unknown): PayoutLedgerFactory | undefined {
  if (
    ledger !== undefined &&
    (ledger === null || typeof (ledger as Partial<PayoutLedgerFactory>).create !== 'function')
  ) {
    throw new PayoutsConfigError('ledger', 'a ledger such as payoutLedgerPostgres({ pool })', RUNS_OWNER);
  }
  return ledger as PayoutLedgerFactory | undefined;
}

function resolveEvictionPolicy(policy: unknown): string | undefined {
  if (policy !== undefined && (typeof policy !== 'string' || !/^[a-z][a-z-]{0,39}$/.test(policy))) {
    throw new PayoutsConfigError('acceptEvictionPolicy', "a Redis maxmemory-policy, such as 'allkeys-lru'", RUNS_OWNER);
  }
  return policy;
}

/**
 * The limiter of BullMQ counts per fixed window, so two full windows can meet at their boundary and let through twice
 * the limit within one sliding window. Smaller windows, each allowing its share, bound that to one small window more.
 */
function limiterOf(rateLimit: unknown): Pick<PayoutRunsConfig, 'limiter' | 'rateLimited'> {
  if (rateLimit === false) return { limiter: UNLIMITED, rateLimited: false };
  if (rateLimit === null || typeof rateLimit !== 'object') {
    throw new PayoutsConfigError('rateLimit', '{ max, durationMs } as the provider allows, or false', RUNS_OWNER);
  }
  rejectUnknownKeys(rateLimit, RATE_LIMIT_KEYS, 'rateLimit', RUNS_OWNER);
  const { max: rawMax, durationMs: rawDuration, slices: rawSlices } = rateLimit as Record<string, unknown>;
  const max = whole('rateLimit.max', rawMax, undefined, 1, 1_000_000);
  const durationMs = whole('rateLimit.durationMs', rawDuration, undefined, 10, DAY_MS);
  const slices = whole('rateLimit.slices', rawSlices, Math.min(10, max), 1, max);
  const perSlice = Math.floor(max / slices);
  // Rounded up, so that the slices together never allow more than `max` per `durationMs`.
  return { limiter: { max: perSlice, duration: Math.ceil((durationMs * perSlice) / max) }, rateLimited: true };
}

/** An ioredis `Cluster` (or a client that says it is one). */
function isCluster(connection: object): boolean {
  return (connection as { isCluster?: unknown }).isCluster === true || connection.constructor?.name === 'Cluster';
}

const whole = (name: string, value: unknown, fallback: number | undefined, min: number, max: number) =>
  wholeNumberInRange(name, value, fallback, min, max, RUNS_OWNER);
