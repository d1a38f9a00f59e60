import type { ConnectionOptions } from 'bullmq';
import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { wholeNumberInRange } from '../common/whole-number-option.js';
import { REDIS_CONNECTION_EXPECTED, redisConnectionOption } from '../common/redis-connection-option.js';
import { PayoutsConfigError } from '../index.js';

/** The options of `payoutsQueue()`: where the queue lives, what each instance does, and how jobs are retried. */
export interface PayoutsQueueOptions {
  /**
   * How BullMQ reaches Redis: a `redis://[user:password@]host:port[/db]` URL (`rediss://` for TLS) or connection options
   * such as `{ host, port, password, tls }` (BullMQ creates and closes its own connections; on bullmq 6 the `ioredis`
   * package must then be installed), or a client of your own.
   */
  connection: ConnectionOptions | string;
  /**
   * The queue's name: `'payouts-notifications'` for the unnamed registration, `'payouts-notifications-<name>'` for a
   * named one, so each account has its own queue. Every instance of an account must use the same.
   */
  queueName?: string;
  /** BullMQ's key prefix: the queue's keys are `<prefix>:<queueName>:…`. Default `'bull'`. */
  prefix?: string;
  /** Serve the notification route here and store what it receives. `false` for a worker-only instance. */
  route?: boolean;
  /** Run a worker here, which runs the handlers. `false` for a web-only instance. */
  worker?: boolean;
  /** Runs of the handlers per notification, the first included, before it stays failed. Default `5`. */
  attempts?: number;
  /** The wait before the first retry, doubled before each further one. Default `10000` (10 s). */
  backoffMs?: number;
  /**
   * How long a handled notification is remembered (its completed job is kept), so that a re-send within it is
   * acknowledged without running the handlers again; keep it above the 15 minutes of the service's re-sends.
   * Whole seconds, at least 1000. Default 24 hours.
   */
  retentionMs?: number;
  /** How long the route waits for Redis to store a notification before it answers `500`. Default `2000`. */
  enqueueTimeoutMs?: number;
  /** Notifications a worker handles at once. Default `1`. */
  concurrency?: number;
  /**
   * How long a worker holds a job without renewing its lock (it renews it while the handlers run); a job whose
   * worker died is taken up by another worker once its lock has expired. Default `30000`.
   */
  lockDurationMs?: number;
  /** How long shutdown waits for the running handlers to finish before it lets the process go. Default `10000`. */
  shutdownTimeoutMs?: number;
}

/** The options after validation, with every default filled in. */
export interface PayoutsQueueConfig {
  readonly connection: ConnectionOptions;
  readonly queueName: string | undefined;
  readonly prefix: string | undefined;
  readonly route: boolean;
  readonly worker: boolean;
  readonly attempts: number;
  readonly backoffMs: number;
  readonly retentionMs: number;
  readonly enqueueTimeoutMs: number;
  readonly concurrency: number;
  readonly lockDurationMs: number;
  readonly shutdownTimeoutMs: number;
}

/** Whose options these are, in the message of a `PayoutsConfigError`. */
export const QUEUE_OWNER = 'payoutsQueue';

const MINUTE_MS = 60_000;
const OPTION_KEYS = optionKeys<PayoutsQueueOptions>()(
  'connection',
  'queueName',
  'prefix',
  'route',
  'worker',
  'attempts',
  'backoffMs',
  'retentionMs',
  'enqueueTimeoutMs',
  'concurrency',
  'lockDurationMs',
  'shutdownTimeoutMs',
);

/** Checks the options when `payoutsQueue()` is called, so a bad one stops the bootstrap; never echoes a value. */
export function resolvePayoutsQueueOptions(options: PayoutsQueueOptions): PayoutsQueueConfig {
  if (options === null || typeof options !== 'object') {
    throw new PayoutsConfigError('options', 'an object with connection', QUEUE_OWNER);
  }
  rejectUnknownKeys(options, OPTION_KEYS, '', QUEUE_OWNER);
  const { queueName, prefix, route = true, worker = true } = options;
  const connection = redisConnectionOption<ConnectionOptions>(options.connection);
  if (connection === undefined) throw new PayoutsConfigError('connection', REDIS_CONNECTION_EXPECTED, QUEUE_OWNER);
  // BullMQ refuses `:` in a queue name: it separates the parts of its keys.
  if (queueName !== undefined && (typeof queueName !== 'string' || !/^[A-Za-z0-9][\w.-]{0,99}$/.test(queueName))) {
    throw new PayoutsConfigError('queueName', 'up to 100 letters, digits, "-", "_" or "."', QUEUE_OWNER);
  }
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '')) {
    throw new PayoutsConfigError('prefix', 'a non-empty string such as "bull"', QUEUE_OWNER);
  }
  if (typeof route !== 'boolean' || typeof worker !== 'boolean' || (!route && !worker)) {
    throw new PayoutsConfigError(
      'route',
      'route, worker or both left true: an instance must do one of them',
      QUEUE_OWNER,
    );
  }
  return {
    connection,
    queueName,
    prefix,
    route,
    worker,
    attempts: whole('attempts', options.attempts, 5, 1, 1000),
    backoffMs: whole('backoffMs', options.backoffMs, 10_000, 1, 24 * 60 * MINUTE_MS),
    retentionMs: whole('retentionMs', options.retentionMs, 24 * 60 * MINUTE_MS, 1000, Number.MAX_SAFE_INTEGER),
    enqueueTimeoutMs: whole('enqueueTimeoutMs', options.enqueueTimeoutMs, 2000, 1, 60_000),
    concurrency: whole('concurrency', options.concurrency, 1, 1, 1000),
    lockDurationMs: whole('lockDurationMs', options.lockDurationMs, 30_000, 100, 10 * MINUTE_MS),
    shutdownTimeoutMs: whole('shutdownTimeoutMs', options.shutdownTimeoutMs, 10_000, 0, 10 * MINUTE_MS),
  };
}

const whole = (name: string, value: unknown, fallback: number, min: number, max: number) =>
  wholeNumberInRange(name, value, fallback, min, max, QUEUE_OWNER);
