import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { payoutsQueue } from 'nestjs-payouts/queue';
import { createNotificationsApp } from '../notifications/notifications-test-app.js';
import { startRunsApp } from '../payout-runs/payout-runs-test-app.js';
import { uniqueQueueName } from '../queue/queue-test-app.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';

const TIMES = 20;
/** How long Redis answers nothing while each app starts: its connections' start-up checks wait for Redis meanwhile. */
const REDIS_BUSY_SECONDS = '0.1';
/**
 * Without ioredis's own ready check, a connection is ready once connected, so BullMQ's version check is the first
 * command sent: the one Redis keeps waiting, as a loaded machine can between the two.
 */
const connection = (redis: RedisServer) => ({ host: '127.0.0.1', port: redis.port, enableReadyCheck: false });

/**
 * An app closed within milliseconds of starting closes BullMQ connections whose start-up check (connected, Redis's
 * version read) may still be in flight. bullmq 5 drops a connection's listeners when it closes, so such a check's
 * `Connection is closed.` would be rejected with nobody listening: an unhandled rejection, which ends a Node process.
 */
describeWithRedis('an app stopped right after it started, with BullMQ connections still starting', () => {
  let redis: RedisServer;
  let client: Redis;
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    // DEBUG SLEEP keeps Redis from answering anyone for a while, as a loaded machine can.
    redis = await RedisServer.start({ args: ['--enable-debug-command', 'local'] });
    client = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.close();
  });
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  /**
   * Redis answers no one for REDIS_BUSY_SECONDS from now: the command is written before the app opens its connections,
   * so Redis reads it first. Settles once Redis answers again.
   */
  const busyRedis = async (): Promise<{ answered: Promise<unknown> }> => {
    expect(await client.ping()).toBe('PONG');
    return { answered: client.call('DEBUG', 'SLEEP', REDIS_BUSY_SECONDS) };
  };
  /**
   * A few turns of the event loop, as an app's first moments give them: the connections opened at start connect (on
   * loopback, within a turn or two) and send their start-up check, which the busy Redis leaves unanswered.
   */
  const firstTurns = async () => {
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  };
  /** A round trip to Redis once it answers again, so that the sockets closed by the last app have been seen to close. */
  const settle = async (busy: { answered: Promise<unknown> }) => {
    expect(await busy.answered).toBe('OK');
    expect(await client.ping()).toBe('PONG');
  };

  it.each([true, false])(
    'payout runs (worker: %s) close without an unhandled rejection',
    async (worker) => {
      for (let time = 0; time < TIMES; time += 1) {
        const busy = await busyRedis();
        // createApplicationContext() initialises the app: its hooks have run when it resolves.
        const { app } = await startRunsApp('http://127.0.0.1:9/v1', {
          connection: connection(redis),
          prefix: `stop-now-${worker}-${time}`,
          worker,
          rateLimit: false,
        });
        await firstTurns();
        await expect(app.close()).resolves.toBeUndefined();
        await settle(busy);
      }

      expect(unhandled).toEqual([]);
    },
    60_000,
  );

  it('queue mode closes without an unhandled rejection', async () => {
    for (let time = 0; time < TIMES; time += 1) {
      const busy = await busyRedis();
      const app = await createNotificationsApp({
        adapter: 'express',
        notifications: {
          verification: { secret: { value: 'stop-right-after-start' } },
          dispatcher: payoutsQueue({
            connection: connection(redis),
            queueName: uniqueQueueName(),
          }),
        },
      });
      await app.init();
      await firstTurns();
      await expect(app.close()).resolves.toBeUndefined();
      await settle(busy);
    }

    expect(unhandled).toEqual([]);
  }, 60_000);
});
