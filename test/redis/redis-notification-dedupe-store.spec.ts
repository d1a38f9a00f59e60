import { inspect } from 'node:util';
import { Logger } from '@nestjs/common';
import { PayoutsConfigError, RedisDedupeStoreError } from '../../lib/index.js';
import {
  type RedisClientLike,
  RedisNotificationDedupeStore,
  type RedisNotificationDedupeStoreOptions,
} from '../../lib/redis/index.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RecordingLogger } from '../recording-logger.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { connectRedisClient, REDIS_CLIENTS, type TestRedisClient } from './redis-clients.js';

let sequence = 0;
/** A dedupe key shaped like the route's, unique per call. */
const dedupeKey = () => `PAYMENT_METHOD_ADDED:shp_${++sequence}:pmt_${sequence}:2025-03-14T09%3A26%3A53.589Z`;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected a rejection'),
    (error: unknown) => error,
  );
}

describeWithRedis('RedisNotificationDedupeStore on a real redis-server', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(() => server?.close());

  describe.each(REDIS_CLIENTS)('with %s', (kind) => {
    let redis: TestRedisClient;
    const prefix = `test:${kind}:`;
    const newStore = (options: RedisNotificationDedupeStoreOptions = {}) =>
      new RedisNotificationDedupeStore(redis.client, { prefix, ...options });

    beforeAll(async () => {
      redis = await connectRedisClient(kind, server.url);
    });
    afterAll(() => redis?.close());

    it('claims a notification once, answers in progress while it runs, and handled once completed', async () => {
      const store = newStore();
      const key = dedupeKey();
      expect(await store.claim(key, 'first')).toBe('claimed');
      expect(await store.claim(key, 'second')).toBe('in-progress');
      await store.complete(key);
      expect(await store.claim(key, 'third')).toBe('handled');
      expect(await store.claim(dedupeKey(), 'fourth')).toBe('claimed');
    });

    it('keeps each notification under <prefix>n:<dedupe key>, with expiries set by the server', async () => {
      const store = newStore({ leaseMs: 90_000, handledTtlMs: 3_600_000 });
      const key = dedupeKey();
      const redisKey = `${prefix}n:${key}`;
      expect(store.keyOf(key)).toBe(redisKey);

      await store.claim(key, 'first');
      expect(await redis.command('GET', redisKey)).toBe('claim:first');
      const leaseLeft = Number(await redis.command('PTTL', redisKey));
      expect(leaseLeft).toBeGreaterThan(80_000);
      expect(leaseLeft).toBeLessThanOrEqual(90_000);

      await store.complete(key);
      expect(await redis.command('GET', redisKey)).toBe('handled');
      const handledLeft = Number(await redis.command('PTTL', redisKey));
      expect(handledLeft).toBeGreaterThan(3_590_000);
      expect(handledLeft).toBeLessThanOrEqual(3_600_000);
    });

    it('encodes the glob characters of a key, so that a key read as a SCAN pattern matches itself alone', async () => {
      const store = newStore();
      const n = ++sequence;
      const starred = `PAYMENT_METHOD_ADDED:shp_${n}:pmt_*:2025-03-14T09%3A26%3A53.589Z`;
      const other = `PAYMENT_METHOD_ADDED:shp_${n}:pmt_other:2025-03-14T09%3A26%3A53.589Z`;

      await store.claim(starred, 'a');
      await store.claim(other, 'b');

      const starredKey = `${prefix}n:PAYMENT_METHOD_ADDED:shp_${n}:pmt_%2A:2025-03-14T09%3A26%3A53.589Z`;
      expect(store.keyOf(starred)).toBe(starredKey);
      expect(store.keyOf('a?b[c]d\\e')).toBe(`${prefix}n:a%3Fb%5Bc%5Dd%5Ce`);
      expect(String(await redis.command('GET', starredKey)).split('\n')[0]).toBe('claim:a');
      const [, matched] = (await redis.command('SCAN', '0', 'MATCH', starredKey, 'COUNT', '100000')) as [
        string,
        string[],
      ];
      expect(matched).toEqual([starredKey]);
    });

    it("recognises a notification handled, or being handled, under the previous release's key with a raw *", async () => {
      const store = newStore();
      const n = ++sequence;
      const handled = `PAYMENT_METHOD_ADDED:shp_${n}:pmt_*1:2025-03-14T09%3A26%3A53.589Z`;
      const running = `PAYMENT_METHOD_ADDED:shp_${n}:pmt_*2:2025-03-14T09%3A26%3A53.589Z`;
      await redis.command('SET', `${prefix}n:${handled}`, 'handled', 'PX', '60000');
      await redis.command('SET', `${prefix}n:${running}`, 'claim:old-release', 'PX', '60000');

      expect(await store.claim(handled, 'new')).toBe('handled');
      expect(await store.claim(running, 'new')).toBe('in-progress');
      expect(await redis.command('EXISTS', store.keyOf(handled), store.keyOf(running))).toBe(0);
    });

    it('claims a key with * in one round trip on one server, the old spelling read inside the script', async () => {
      const sent: string[] = [];
      const store = new RedisNotificationDedupeStore(recordingClient(redis.client, sent), { prefix });
      const n = ++sequence;
      const starred = (suffix: string) => `PAYMENT_METHOD_ADDED:shp_${n}:pmt_*${suffix}:2025-03-14T09%3A26%3A53.589Z`;
      await redis.command('SET', `${prefix}n:${starred('handled')}`, 'handled', 'PX', '60000');
      await redis.command('SET', `${prefix}n:${starred('running')}`, 'claim:old-release', 'PX', '60000');
      // The first claim of a script may find Redis without it (NOSCRIPT, then EVAL): not counted.
      expect(await store.claim(starred('warm-up'), 'warm-up')).toBe('claimed');
      sent.length = 0;

      expect(await store.claim(starred('handled'), 'new')).toBe('handled');
      expect(await store.claim(starred('running'), 'new')).toBe('in-progress');
      expect(await store.claim(starred('fresh'), 'new')).toBe('claimed');

      expect(sent).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
      expect(String(await redis.command('GET', store.keyOf(starred('fresh')))).split('\n')[0]).toBe('claim:new');
      expect(await redis.command('EXISTS', `${prefix}n:${starred('fresh')}`)).toBe(0);
      expect(await redis.command('EXISTS', store.keyOf(starred('handled')), store.keyOf(starred('running')))).toBe(0);
    });

    it('keeps the record of a failed delivery for handledTtlMs, answers it to the next claim, and drops it once handled', async () => {
      const store = newStore({ leaseMs: 90_000, handledTtlMs: 3_600_000 });
      const key = dedupeKey();
      const redisKey = store.keyOf(key);
      const record = { succeeded: ['CardStore.save'], failures: { 'Mailer.send': 1 } };

      expect(await store.claimWithRecord(key, 'first')).toBe('claimed');
      await store.releaseWithRecord(key, 'first', record);
      expect(await redis.command('GET', redisKey)).toBe(`record:${JSON.stringify(record)}`);
      expect(Number(await redis.command('PTTL', redisKey))).toBeGreaterThan(3_590_000);

      expect(await store.claimWithRecord(key, 'second')).toEqual({ claim: 'claimed', record });
      const claimed = String(await redis.command('GET', redisKey)).split('\n');
      expect([claimed[0], claimed[2]]).toEqual(['claim:second', JSON.stringify(record)]);
      // The lease is in the value; the key lasts as long as the record, should the instance die.
      expect(Number(await redis.command('PTTL', redisKey))).toBeGreaterThan(3_590_000);
      expect(await store.claimWithRecord(key, 'third')).toBe('in-progress');
      await store.release(key, 'third');
      await store.release(key, 'second');
      expect(await redis.command('GET', redisKey)).toBe(`record:${JSON.stringify(record)}`);

      expect(await store.claim(key, 'fourth')).toBe('claimed');
      await store.complete(key);
      expect(await redis.command('GET', redisKey)).toBe('handled');
      expect(await store.claimWithRecord(key, 'fifth')).toBe('handled');
    });

    it('releases only its own claim: a late release by another delivery leaves the live claim', async () => {
      const store = newStore();
      const key = dedupeKey();
      await store.claim(key, 'live');
      await store.release(key, 'late');
      expect(await store.claim(key, 'other')).toBe('in-progress');
      await store.release(key, 'live');
      expect(await store.claim(key, 'next')).toBe('claimed');
    });

    it('never drops a handled mark on a late release', async () => {
      const store = newStore();
      const key = dedupeKey();
      await store.claim(key, 'first');
      await store.complete(key);
      await store.release(key, 'first');
      await store.release(key, 'another');
      expect(await store.claim(key, 'next')).toBe('handled');
    });

    it('lets a re-send claim the notification once the lease of a crashed delivery has expired', async () => {
      // Long enough that a stalled test process still makes its second claim within the lease.
      const store = newStore({ leaseMs: 1500 });
      const key = dedupeKey();
      expect(await store.claim(key, 'crashed')).toBe('claimed');
      expect(await store.claim(key, 'early')).toBe('in-progress');
      const answer = await eventually(
        async () => ((await store.claim(key, 're-send')) === 'claimed' ? 'claimed' : undefined),
        5_000,
        'the lease expires',
      );
      expect(answer).toBe('claimed');
    });

    it('marks handled on a late complete, after its claim expired and another delivery claimed the key', async () => {
      const store = newStore({ leaseMs: 150 });
      const key = dedupeKey();
      await store.claim(key, 'slow');
      await eventually(
        async () => ((await store.claim(key, 'later')) === 'claimed' ? true : undefined),
        5_000,
        'the lease expires',
      );
      await store.complete(key);
      expect(await store.claim(key, 'third')).toBe('handled');
      // The later delivery's handlers then fail: its release must not drop the handled mark.
      await store.release(key, 'later');
      expect(await store.claim(key, 'fourth')).toBe('handled');
    });

    it('sends its scripts again when the server has lost them (NOSCRIPT)', async () => {
      const store = newStore();
      const key = dedupeKey();
      expect(await store.claim(key, 'first')).toBe('claimed');
      await redis.command('SCRIPT', 'FLUSH');
      expect(await store.claim(key, 'second')).toBe('in-progress');
      await redis.command('SCRIPT', 'FLUSH');
      await store.release(key, 'first');
      expect(await store.claim(key, 'third')).toBe('claimed');
    });

    it('fails within commandTimeoutMs when Redis does not answer, and leaves no claim behind', async () => {
      const store = newStore({ commandTimeoutMs: 100 });
      const key = dedupeKey();
      // The server holds every client's commands for a while: a real Redis that does not answer.
      await redis.command('CLIENT', 'PAUSE', '600', 'ALL');
      const claimError = await rejection(store.claim(key, 'timed-out'));
      expect(claimError).toBeInstanceOf(RedisDedupeStoreError);
      expect(claimError).toMatchObject({ operation: 'claim', reason: 'timeout' });
      expect((claimError as Error).message).toBe(
        'The Redis dedupe store could not claim a notification: no reply within 100 ms.',
      );
      const completeError = await rejection(store.complete(dedupeKey()));
      expect(completeError).toMatchObject({ operation: 'complete', reason: 'timeout' });

      // Once Redis answers again, the claim that timed out does not hold the notification for a lease.
      expect(await newStore({ commandTimeoutMs: 5_000 }).claim(key, 're-send')).toBe('claimed');
    });

    it('reports an error reply from Redis as a RedisDedupeStoreError', async () => {
      const store = newStore();
      const key = dedupeKey();
      await redis.command('HSET', store.keyOf(key), 'field', 'value');
      const error = await rejection(store.claim(key, 'first'));
      expect(error).toBeInstanceOf(RedisDedupeStoreError);
      expect(error).toMatchObject({ operation: 'claim', reason: 'error' });
      expect((error as Error).message).toMatch(/^The Redis dedupe store could not claim a notification: WRONGTYPE /);
    });

    it('checks its options when it is built, naming the option', () => {
      const invalid: [string, RedisNotificationDedupeStoreOptions][] = [
        ['prefix', { prefix: 42 as unknown as string }],
        ['leaseMs', { leaseMs: 300_000 }],
        ['leaseMs', { leaseMs: 0 }],
        ['handledTtlMs', { handledTtlMs: 899_999 }],
        ['commandTimeoutMs', { commandTimeoutMs: 1.5 }],
        ['options', 'fast' as RedisNotificationDedupeStoreOptions],
      ];
      for (const [option, options] of invalid) {
        expect(() => new RedisNotificationDedupeStore(redis.client, options)).toThrow(
          expect.objectContaining({ constructor: PayoutsConfigError, option }),
        );
      }
      expect(() => newStore({ leaseMs: 299_999, handledTtlMs: 900_000, commandTimeoutMs: 1 })).not.toThrow();
    });
  });

  it('refuses anything but a node-redis or ioredis client, without echoing it', () => {
    const notAClient = { url: 'redis://payouts:hunter2@redis.internal:6379' };
    const construct = () => new RedisNotificationDedupeStore(notAClient as never);
    expect(construct).toThrow(PayoutsConfigError);
    expect(construct).toThrow(
      'RedisNotificationDedupeStore option "client" is invalid: expected a connected node-redis (v5 or later) or ' +
        'ioredis (5.3 or later) client.',
    );
  });

  describe('onModuleInit', () => {
    let logger: RecordingLogger;
    let redis: TestRedisClient | undefined;
    beforeEach(() => {
      logger = new RecordingLogger();
      Logger.overrideLogger(logger);
    });
    afterEach(async () => {
      redis?.close();
      redis = undefined;
      const admin = await connectRedisClient('ioredis', server.url);
      await admin.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
      admin.close();
    });

    it.each(REDIS_CLIENTS)('says nothing with maxmemory-policy noeviction (%s)', async (kind) => {
      redis = await connectRedisClient(kind, server.url);
      await new RedisNotificationDedupeStore(redis.client).onModuleInit();
      expect(logger.lines).toEqual([]);
    });

    it.each(REDIS_CLIENTS)('warns when Redis may evict keys (%s)', async (kind) => {
      redis = await connectRedisClient(kind, server.url);
      await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
      await new RedisNotificationDedupeStore(redis.client).onModuleInit();
      expect(logger.messages('warn')).toEqual([
        'Redis maxmemory-policy is "allkeys-lru": under memory pressure Redis may evict dedupe keys, and a re-send ' +
          'of a notification whose key was evicted runs its handlers again. Set maxmemory-policy to "noeviction".',
      ]);
    });

    it.each(REDIS_CLIENTS)('is silent when CONFIG is refused, and works with least privileges (%s)', async (kind) => {
      const admin = await connectRedisClient('ioredis', server.url);
      await admin.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
      // The ACL docs/several-instances.md gives, without its optional TIME: the store's commands on its own keys, and no CONFIG.
      await admin.command(
        'ACL',
        'SETUSER',
        'payouts',
        'reset',
        'on',
        '>payouts-password',
        '~payouts:*',
        '+@connection',
        '+info',
        '+evalsha',
        '+eval',
        '+get',
        '+set',
        '+del',
      );
      admin.close();
      redis = await connectRedisClient(kind, server.url, { username: 'payouts', password: 'payouts-password' });
      const store = new RedisNotificationDedupeStore(redis.client);
      await store.onModuleInit();
      expect(logger.lines).toEqual([]);
      const key = dedupeKey();
      expect(await store.claim(key, 'first')).toBe('claimed');
      await store.complete(key);
      expect(await store.claim(key, 'second')).toBe('handled');
      // Without TIME, a claim over a record holds it for the lease only, and still answers it.
      const record = { succeeded: ['CardStore.save'], failures: {} };
      const failedKey = dedupeKey();
      expect(await store.claimWithRecord(failedKey, 'first')).toBe('claimed');
      await store.releaseWithRecord(failedKey, 'first', record);
      expect(await store.claimWithRecord(failedKey, 'second')).toEqual({ claim: 'claimed', record });
      expect(await redis.command('GET', store.keyOf(failedKey))).toBe(`claim:second\n\n${JSON.stringify(record)}`);
      expect(await store.claimWithRecord(failedKey, 'third')).toBe('in-progress');
      await store.release(failedKey, 'second');
      expect(await store.claimWithRecord(failedKey, 'fourth')).toEqual({ claim: 'claimed', record });
    });
  });
});

describeWithRedis('RedisNotificationDedupeStore errors', () => {
  const password = 'redis-password-7f3a9c';
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start({ args: ['--requirepass', password] });
  });
  afterAll(() => server?.close());

  it.each(REDIS_CLIENTS)('never carry the Redis password when Redis is gone (%s)', async (kind) => {
    const redis = await connectRedisClient(kind, server.url, { password });
    try {
      const store = new RedisNotificationDedupeStore(redis.client, { commandTimeoutMs: 200 });
      expect(await store.claim(dedupeKey(), 'first')).toBe('claimed');
      await server.stop();
      const error = await rejection(store.claim(dedupeKey(), 'second'));
      expect(error).toBeInstanceOf(RedisDedupeStoreError);
      expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(password);
    } finally {
      redis.close();
      if (server.pid === undefined) await server.restart();
    }
  });
});

/** The real client, recording the name of each command the store sends through it. */
function recordingClient(client: RedisClientLike, sent: string[]): RedisClientLike {
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'call') {
        return (command: string, ...args: string[]) => {
          sent.push(command);
          return value.call(target, command, ...args);
        };
      }
      if (property === 'sendCommand') {
        return (args: string[], ...options: unknown[]) => {
          sent.push(args[0]!);
          return value.call(target, args, ...options);
        };
      }
      return value.bind(target);
    },
  });
}
