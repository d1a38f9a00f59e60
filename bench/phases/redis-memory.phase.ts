import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisNotificationDedupeStore } from 'nestjs-payouts/redis';
import { findRedisServer, RedisServer } from '../../test/support/redis-server.js';
import { sampleDedupeKey } from '../notification-sample.js';
import { MIB } from '../stats.js';
import { printTable } from '../table.js';

/** Notifications recorded at once, as concurrent deliveries would: one claim, then one complete each. */
const BATCH = 1_000;

/**
 * Item 8: what the Redis store costs Redis per handled notification, with the default prefix and the route's key
 * shape: the growth of `used_memory` over the checkpoint's notifications, and `MEMORY USAGE` of one key of each state.
 */
export async function measureRedisMemory(checkpoints: readonly number[]): Promise<void> {
  if (!findRedisServer()) {
    console.log('\nRedis memory left out: redis-server is not on the PATH.');
    return;
  }
  const server = await RedisServer.start();
  const redis = new Redis(server.url, { lazyConnect: true });
  try {
    await redis.connect();
    const store = new RedisNotificationDedupeStore(redis);
    const baseline = await usedMemory(redis);
    const rows = [];
    let recorded = 0;
    for (const total of checkpoints) {
      while (recorded < total) {
        const count = Math.min(BATCH, total - recorded);
        const keys = Array.from({ length: count }, (_, index) => sampleDedupeKey(recorded + index));
        recorded += count;
        await Promise.all(keys.map(async (key) => (await store.claim(key, randomUUID()), store.complete(key))));
      }
      const growth = (await usedMemory(redis)) - baseline;
      rows.push([total.toLocaleString('en-US'), await redis.dbsize(), growth / MIB, Math.round(growth / total)]);
    }
    const claimed = sampleDedupeKey(-1);
    await store.claim(claimed, randomUUID());
    const memoryUsage = async (key: string) =>
      Number(await redis.call('MEMORY', 'USAGE', store.keyOf(key), 'SAMPLES', '0'));
    printTable(
      'Redis dedupe store: memory in Redis (used_memory growth; default prefix, 79-character dedupe keys)',
      ['Notifications', 'Keys', 'Growth MiB', 'Bytes/notification'],
      rows,
    );
    printTable(
      'Redis dedupe store: MEMORY USAGE of one key',
      ['Key state', 'Bytes'],
      [
        ['handled', await memoryUsage(sampleDedupeKey(0))],
        ['claimed', await memoryUsage(claimed)],
      ],
    );
  } finally {
    redis.disconnect();
    await server.close();
  }
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)![1]);
}
