import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisNotificationDedupeStore } from '../../lib/redis/index.js';
import { RedisCluster } from '../support/redis-cluster.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { connectRedisClient, connectRedisClusterClient, REDIS_CLIENTS } from './redis-clients.js';

/** Enough notifications that their keys hash to slots on every node. */
const NOTIFICATIONS = 30;

describeWithRedis('RedisNotificationDedupeStore on a real Redis Cluster', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 60_000);
  afterAll(() => cluster?.close());

  /** How many keys each node holds, read from each node directly. */
  async function keysPerNode(): Promise<number[]> {
    return Promise.all(
      cluster.urls.map(async (url) => {
        const node = await connectRedisClient('ioredis', url);
        try {
          return Number(await node.command('DBSIZE'));
        } finally {
          node.close();
        }
      }),
    );
  }

  describe.each(REDIS_CLIENTS)('with the %s cluster client', (kind) => {
    it('claims, completes and releases notifications whose keys live on every node', async () => {
      const redis = await connectRedisClusterClient(kind, cluster.urls);
      try {
        const store = new RedisNotificationDedupeStore(redis.client, { prefix: `${kind}:` });
        await store.onModuleInit();
        const before = await keysPerNode();
        const keys = Array.from({ length: NOTIFICATIONS }, (_, index) => `PAYMENT_METHOD_ADDED:s${index}:p${index}:t`);

        for (const key of keys) expect(await store.claim(key, `first-${key}`)).toBe('claimed');
        for (const key of keys) expect(await store.claim(key, `second-${key}`)).toBe('in-progress');
        const completed = keys.filter((_, index) => index % 2 === 0);
        const released = keys.filter((_, index) => index % 2 === 1);
        for (const key of completed) await store.complete(key);
        for (const key of released) await store.release(key, `first-${key}`);

        const after = await keysPerNode();
        expect(after.map((count, node) => count - before[node]!).every((added) => added > 0)).toBe(true);

        // Every node lost its script cache: the scripts are sent again wherever the key lives.
        for (const url of cluster.urls) {
          const node = await connectRedisClient('ioredis', url);
          await node.command('SCRIPT', 'FLUSH');
          node.close();
        }
        for (const key of completed) expect(await store.claim(key, `third-${key}`)).toBe('handled');
        for (const key of released) expect(await store.claim(key, `third-${key}`)).toBe('claimed');
      } finally {
        redis.close();
      }
    });

    it("recognises a key with * handled or being handled under the previous release's spelling, on any node", async () => {
      const redis = await connectRedisClusterClient(kind, cluster.urls);
      try {
        const prefix = `${kind}-starred:`;
        const store = new RedisNotificationDedupeStore(redis.client, { prefix });
        const keys = Array.from({ length: NOTIFICATIONS }, (_, index) => `PAYMENT_METHOD_ADDED:s${index}:p*${index}:t`);
        // The old spelling and today's hash to different slots, most of them on different nodes.
        for (const [index, key] of keys.entries()) {
          const value = index % 3 === 0 ? 'handled' : index % 3 === 1 ? 'claim:old-release' : undefined;
          if (value !== undefined) await redis.command('SET', `${prefix}n:${key}`, value, 'PX', '60000');
        }

        const claims = [];
        for (const key of keys) claims.push(await store.claim(key, 'new'));

        expect(claims).toEqual(
          keys.map((_, index) => (index % 3 === 0 ? 'handled' : index % 3 === 1 ? 'in-progress' : 'claimed')),
        );
        for (const [index, key] of keys.entries()) {
          expect(await redis.command('EXISTS', store.keyOf(key))).toBe(index % 3 === 2 ? 1 : 0);
        }
      } finally {
        redis.close();
      }
    });
  });
});
