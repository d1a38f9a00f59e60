import { escapeControls } from './printable.js';
import { type RedisUrlConnection, redisUrlConnection } from './redis-url-connection.js';
import { isWholeNumber } from './whole-number.js';

/** A bad command line, found by a command's own checks; {@link commandLineProblem} turns it into what to print. */
export class InvalidArgument extends Error {}

/**
 * What a command's parser answers for an error thrown while reading its command line: the problem to print for
 * `InvalidArgument` and for `node:util`'s `parseArgs()` refusals; anything else is a defect, and is thrown again.
 */
export function commandLineProblem(error: unknown): { problem: string } {
  if (error instanceof InvalidArgument || (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
    return { problem: (error as Error).message };
  }
  throw error;
}

/** A whole-number option of at least `min`, or `fallback` when absent; a bad value throws `InvalidArgument`. */
export function wholeNumberArgument<T extends number | undefined>(
  option: string,
  value: string | undefined,
  fallback: T,
  min = 1,
): number | T {
  if (value === undefined) return fallback;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!isWholeNumber(number, min)) {
    throw new InvalidArgument(
      `${option} must be a whole number of at least ${min}; got "${escapeControls(value, 100)}"`,
    );
  }
  return number;
}

/** `--redis-url`, else `REDIS_URL`, as connection options; never echoed, as it may hold a password. */
export function redisUrlArgument(url: string | undefined): RedisUrlConnection {
  if (url === undefined) throw new InvalidArgument('--redis-url is required (or the REDIS_URL environment variable)');
  const connection = redisUrlConnection(url);
  if (!connection) throw new InvalidArgument('--redis-url must be a redis:// or rediss:// URL');
  return connection;
}
