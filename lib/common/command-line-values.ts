import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import { InvalidArgument } from './command-line.js';
import { printable } from './printable.js';
import { type RedisUrlConnection, redisUrlConnection } from './redis-url-connection.js';
import { isTimerDelay, timerDelayExpected } from './timer-delay.js';
import { isWholeNumber } from './whole-number.js';

/** A whole-number option of at least `min`, or `fallback` when absent; a bad value throws `InvalidArgument`. */
export function wholeNumberArgument<T extends number | undefined>(
  option: string,
  value: string | undefined,
  fallback: T,
  min = 1,
): number | T {
  if (value === undefined) return fallback;
  const number = decimal(value);
  if (!isWholeNumber(number, min)) {
    throw new InvalidArgument(`${option} must be a whole number of at least ${min}; got ${printable(value)}`);
  }
  return number;
}

/**
 * A duration in milliseconds that a timer waits, or `fallback` when absent: Node's timers fire after 1 ms for a delay
 * above 2^31 - 1 (and `AbortSignal.timeout()` throws above 2^32 - 1), so a longer one is refused, not shortened.
 */
export function timerDelayArgument<T extends number | undefined>(
  option: string,
  value: string | undefined,
  fallback: T,
  min: 0 | 1,
): number | T {
  if (value === undefined) return fallback;
  const number = decimal(value);
  if (!isTimerDelay(number, min)) {
    throw new InvalidArgument(`${option} must be ${timerDelayExpected(min)}; got ${printable(value)}`);
  }
  return number;
}

function decimal(value: string): number {
  return /^\d+$/.test(value) ? Number(value) : Number.NaN;
}

/**
 * `--redis-url`, else the `REDIS_URL` environment variable, as connection options. Never echoed, as it may hold a
 * password; an error names where the value came from.
 */
export function redisUrlArgument(option: string | undefined, env: NodeJS.ProcessEnv): RedisUrlConnection {
  const fromEnv = option === undefined;
  const url = option ?? (env.REDIS_URL || undefined);
  if (url === undefined) throw new InvalidArgument('--redis-url is required (or the REDIS_URL environment variable)');
  const connection = redisUrlConnection(url);
  if (!connection) {
    const source = fromEnv ? 'the REDIS_URL environment variable (read as --redis-url is not given)' : '--redis-url';
    throw new InvalidArgument(
      `${source} must be a redis:// or rediss:// URL such as redis://:<password>@localhost:6379 (the value is not shown)`,
    );
  }
  return connection;
}

/**
 * Runs a check of the package's own options (the same one a module runs at bootstrap) on values from the command line,
 * so that the command accepts exactly what the module does: a `PayoutsConfigError` on one of `optionNames`' keys
 * becomes an `InvalidArgument` naming the command-line option instead of the module's.
 */
export function checkedAsArguments<T>(check: () => T, optionNames: Readonly<Record<string, string>>): T {
  try {
    return check();
  } catch (error) {
    const name = error instanceof PayoutsConfigError ? optionNames[error.option] : undefined;
    if (name === undefined) throw error;
    const expected = /is invalid: expected (.+)\.$/s.exec((error as Error).message)?.[1];
    throw new InvalidArgument(expected ? `${name} must be ${expected}` : `${name} is invalid`);
  }
}
