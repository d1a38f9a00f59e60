import { InMemoryNotificationDedupeStore, type NotificationDedupeStore } from 'nestjs-payouts';
import { argValue } from '../command-line.js';

export const REDIS_CLIENTS = ['node-redis', 'ioredis'] as const;
export type RedisClientName = (typeof REDIS_CLIENTS)[number];

/**
 * Each command's bound, well above the default 500 ms: on a loaded machine a few commands take longer, and the route
 * then refuses the notification (`500`, never an ack before it is stored), which the bench counts as failed. The
 * hand-written route it is compared with waits for Redis without a bound.
 */
const STORE_OPTIONS = { prefix: 'bench:', commandTimeoutMs: 5_000 };

/**
 * The dedupe store named by `--store=node-redis|ioredis` and `--redis-url=…`, on a client connected as an
 * application would; with `--max-entries=N` instead, the in-memory store keeping at most N keys; `undefined` with
 * neither, for the default in-memory store.
 */
export async function dedupeStoreFromArgs(): Promise<NotificationDedupeStore | undefined> {
  const client = argValue('store');
  const maxEntries = argValue('max-entries');
  if (client === undefined) {
    return maxEntries === undefined
      ? undefined
      : new InMemoryNotificationDedupeStore({ maxEntries: Number(maxEntries) });
  }
  if (maxEntries !== undefined) throw new Error('--max-entries is for the in-memory store, not with --store');
  const url = argValue('redis-url');
  if (!url) throw new Error('expected --redis-url=redis://… with --store');
  // Loaded only with a Redis store, as an application without one never loads it.
  const { RedisNotificationDedupeStore } = await import('nestjs-payouts/redis');
  if (client === 'ioredis') {
    const { Redis } = await import('ioredis');
    const redis = new Redis(url, { lazyConnect: true }).on('error', (error: Error) => console.error(error.message));
    await redis.connect();
    return new RedisNotificationDedupeStore(redis, STORE_OPTIONS);
  }
  if (client !== 'node-redis') throw new Error(`expected --store=${REDIS_CLIENTS.join('|')}`);
  const { createClient } = await import('redis');
  const redis = createClient({ url }).on('error', (error: Error) => console.error(error.message));
  await redis.connect();
  return new RedisNotificationDedupeStore(redis, STORE_OPTIONS);
}
