import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { PayoutsConfigError } from '../index.js';

export interface RedisNotificationDedupeStoreOptions {
  /** Start of every key the store writes, as in `<prefix>n:<dedupe key>`. Default `'payouts:'`. */
  prefix?: string;
  /**
   * How long a claim holds a notification while its handlers run; below the service's 5-minute re-send interval, so
   * the claim of an instance that crashed mid-handler is gone when the re-send comes. Default 2 minutes.
   */
  leaseMs?: number;
  /** How long a handled notification is remembered: at least the 15 minutes of the re-sends. Default 24 hours. */
  handledTtlMs?: number;
  /**
   * How long the store waits for Redis on each operation, whatever the client's own retries and offline queue;
   * past it a claim fails, and the route answers `500` without running any handler. Default `500`.
   */
  commandTimeoutMs?: number;
}

/** The options after validation, with every default filled in. */
export interface RedisNotificationDedupeStoreConfig {
  readonly prefix: string;
  readonly leaseMs: number;
  readonly handledTtlMs: number;
  readonly commandTimeoutMs: number;
}

const MINUTE_MS = 60 * 1000;
/** The service re-sends an unacknowledged notification 3 times, 5 minutes apart. */
const RESEND_INTERVAL_MS = 5 * MINUTE_MS;
const RESEND_WINDOW_MS = 3 * RESEND_INTERVAL_MS;

/** Whose options these are, in the message of a `PayoutsConfigError`: the user constructs the store. */
export const STORE_OWNER = 'RedisNotificationDedupeStore';

const STORE_OPTION_KEYS = optionKeys<RedisNotificationDedupeStoreOptions>()(
  'prefix',
  'leaseMs',
  'handledTtlMs',
  'commandTimeoutMs',
);

/** Checks the options when the store is built, so a bad one stops the bootstrap; never echoes a value. */
export function resolveRedisDedupeStoreOptions(
  options: RedisNotificationDedupeStoreOptions = {},
): RedisNotificationDedupeStoreConfig {
  if (options === null || typeof options !== 'object') {
    const expected = 'an object with prefix, leaseMs, handledTtlMs or commandTimeoutMs';
    throw new PayoutsConfigError('options', expected, STORE_OWNER);
  }
  // A misspelt `leaseMS` or `ttlMs` would otherwise leave the default in place without a word.
  rejectUnknownKeys(options, STORE_OPTION_KEYS, '', STORE_OWNER);
  const { prefix = 'payouts:' } = options;
  if (typeof prefix !== 'string') throw new PayoutsConfigError('prefix', 'a string such as "payouts:"', STORE_OWNER);
  return {
    prefix,
    leaseMs: milliseconds('leaseMs', options.leaseMs, 2 * MINUTE_MS, 1, RESEND_INTERVAL_MS - 1, 'below 300000'),
    handledTtlMs: milliseconds(
      'handledTtlMs',
      options.handledTtlMs,
      24 * 60 * MINUTE_MS,
      RESEND_WINDOW_MS,
      Number.MAX_SAFE_INTEGER,
      'of at least 900000 (15 minutes)',
    ),
    commandTimeoutMs: milliseconds('commandTimeoutMs', options.commandTimeoutMs, 500, 1, 60_000, 'up to 60000'),
  };
}

function milliseconds(name: string, value: unknown, fallback: number, min: number, max: number, range: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new PayoutsConfigError(name, `a positive whole number of milliseconds ${range}`, STORE_OWNER);
  }
  return value;
}
