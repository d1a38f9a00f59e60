import type { Redis } from 'ioredis';
import { RedisDedupeStoreError } from '../../lib/index.js';
import { RedisNotificationDedupeStore } from '../../lib/redis/index.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { connectRedisClient, REDIS_CLIENTS, type TestRedisClient } from './redis-clients.js';

let sequence = 0;
const dedupeKey = () => `PAYMENT_METHOD_ADDED:shp_o${++sequence}:pmt_${sequence}:2025-03-14T09%3A26%3A53.589Z`;

/** The end of the current turn of the event loop, after the immediates queued so far. */
const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

describeWithRedis('RedisNotificationDedupeStore, several operations in one turn of the event loop', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(() => server?.close());

  describe.each(REDIS_CLIENTS)('with %s', (kind) => {
    let redis: TestRedisClient;
    beforeEach(async () => {
      redis = await connectRedisClient(kind, server.url);
    });
    afterEach(() => redis?.close());

    it('answers each operation on its own, an error reply failing that operation alone', async () => {
      const store = new RedisNotificationDedupeStore(redis.client, { prefix: `turn:${kind}:` });
      const [first, second, completed, wrongType] = [dedupeKey(), dedupeKey(), dedupeKey(), dedupeKey()];
      await redis.command('HSET', store.keyOf(wrongType), 'field', 'value');

      const operations = [
        store.claim(first, 'a'),
        store.claimWithRecord(second, 'a'),
        store.claim(first, 'b'),
        store.complete(completed),
        store.claim(completed, 'a'),
        store.claim(wrongType, 'a'),
        store.claim(second, 'b'),
      ];
      // ioredis: the socket is corked for the turn, so that the operations go out in one write.
      const stream = kind === 'ioredis' ? (redis.client as Redis).stream : undefined;
      if (stream) expect(stream.writableCorked).toBe(1);
      const outcomes = await Promise.allSettled(operations);
      // The release queued behind the failed claim goes out at the end of its own turn; the socket is left uncorked.
      await endOfTurn();
      if (stream) expect(stream.writableCorked).toBe(0);

      expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : 'rejected'))).toEqual([
        'claimed',
        'claimed',
        'in-progress',
        undefined,
        'handled',
        'rejected',
        'in-progress',
      ]);
      const error = (outcomes[5] as PromiseRejectedResult).reason as unknown;
      expect(error).toBeInstanceOf(RedisDedupeStoreError);
      expect(error).toMatchObject({ operation: 'claim', reason: 'error' });
      expect((error as Error).message).toMatch(/^The Redis dedupe store could not claim a notification: WRONGTYPE /);
      expect(await redis.command('GET', store.keyOf(first))).toBe('claim:a');
      expect(await redis.command('GET', store.keyOf(completed))).toBe('handled');
    });

    it('fails each operation of a turn whose write never reaches Redis, and works again once Redis is back', async () => {
      const store = new RedisNotificationDedupeStore(redis.client, { prefix: `turn:${kind}:`, commandTimeoutMs: 200 });
      const keys = [dedupeKey(), dedupeKey(), dedupeKey()];
      const operations = [store.claim(keys[0]!, 'a'), store.claim(keys[1]!, 'a'), store.complete(keys[2]!)];
      // Redis dies before the end of the turn, when the operations are written.
      const stopped = server.stop();
      const outcomes = await Promise.allSettled(operations);
      await stopped;
      for (const [index, outcome] of outcomes.entries()) {
        expect(outcome.status).toBe('rejected');
        const error = (outcome as PromiseRejectedResult).reason as unknown;
        expect(error).toBeInstanceOf(RedisDedupeStoreError);
        expect(error).toMatchObject({ operation: index < 2 ? 'claim' : 'complete' });
      }

      await server.restart();
      await endOfTurn();
      const key = dedupeKey();
      expect(await eventually(() => store.claim(key, 'a').catch(() => undefined), 10_000, 'a claim')).toBe('claimed');
      expect(await store.claim(key, 'b')).toBe('in-progress');
    });
  });
});
