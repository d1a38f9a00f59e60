import { redisUrlConnection } from './redis-url-connection.js';

/** What the `connection` option of queue mode and payout runs may be, as its error message says it. */
export const REDIS_CONNECTION_EXPECTED =
  'a redis:// or rediss:// URL, Redis connection options such as { host, port }, or a client';

/**
 * The `connection` option as BullMQ takes it: a `redis://` or `rediss://` URL (as ioredis reads one) becomes connection
 * options, an object (options, or a client of the app's) is kept as it is; anything else is `undefined`. BullMQ
 * itself takes no URL, and a URL may hold a password, so no message repeats it.
 */
export function redisConnectionOption<T extends object>(connection: unknown): T | undefined {
  if (typeof connection === 'string') return redisUrlConnection(connection) as T | undefined;
  return connection !== null && typeof connection === 'object' ? (connection as T) : undefined;
}
