import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { startRunsApp } from '../payout-runs/payout-runs-test-app.js';
import { queueSuite, startQueueApp } from '../queue/queue-test-app.js';
import { describeWithRedis } from '../support/redis-suite.js';

/** How long Redis holds every command: the app boots and closes meanwhile. */
const PAUSE_MS = 700;
/** Ample for loopback connections to open and send their start-up check, well inside the pause. */
const CONNECT_MS = 200;

/*
 * bullmq 5 drops a connection's listeners when it closes, so a connection closed while its start-up version check is
 * in flight rejects with nobody listening (bullmq 6 handles it). Without ioredis's own ready check, each connection is
 * ready on connect and BullMQ sends that check at once; Redis holds it, so the app closes while it is in flight. The
 * close waits for it (up to a second), and Redis answers it as the pause ends.
 */
describeWithRedis('an app closed while its BullMQ connections are still starting', () => {
  const suite = queueSuite();

  /** What was rejected with nobody listening while an app from `start` closed with Redis holding its checks. */
  const rejectionsOnClose = async (start: () => Promise<{ close(): Promise<void> }>): Promise<unknown[]> => {
    const rejections: unknown[] = [];
    const record = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', record);
    try {
      await suite.client.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
      const app = await start();
      await sleep(CONNECT_MS);
      await app.close();
      // Past the pause, so that anything rejected when the connections closed has surfaced.
      await sleep(PAUSE_MS);
      return rejections;
    } finally {
      process.off('unhandledRejection', record);
    }
  };
  const connection = () => ({ host: '127.0.0.1', port: suite.redis.port, enableReadyCheck: false });

  it.each(['express', 'fastify'] as const)(
    'closes in queue mode on %s without an unhandled rejection',
    async (adapter) => {
      const start = async () => (await startQueueApp(adapter, suite.redis, { connection: connection() })).app;
      expect(await rejectionsOnClose(start)).toEqual([]);
      expect(await suite.client.ping()).toBe('PONG');
    },
  );

  it('closes with payout runs without an unhandled rejection', async () => {
    const start = async () =>
      (await startRunsApp('http://127.0.0.1:9', { connection: connection(), rateLimit: false })).app;
    expect(await rejectionsOnClose(start)).toEqual([]);
    expect(await suite.client.ping()).toBe('PONG');
  });
});
