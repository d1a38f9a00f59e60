import { RedisDedupeStoreError } from '../../lib/index.js';
import { RedisNotificationDedupeStore } from '../../lib/redis/index.js';
import { createClient } from 'redis';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';

let sequence = 0;
const dedupeKey = () => `PAYMENT_METHOD_ADDED:shp_t${++sequence}:pmt_${sequence}:2025-03-14T09%3A26%3A53.589Z`;

/** The calls of `command` the server has counted since it started, from `INFO commandstats`. */
function callsOf(commandStats: string, command: string): number {
  const line = commandStats.split('\r\n').find((entry) => entry.startsWith(`cmdstat_${command}:`));
  return line === undefined ? 0 : Number(/calls=(\d+)/.exec(line)![1]);
}

/** node-redis 6 has a per-command timeout that takes a queued command out unsent; node-redis 5 (the Nest 11 leg's) has none. */
const nodeRedisMajor = Number(
  (
    JSON.parse(readFileSync(createRequire(import.meta.url).resolve('redis/package.json'), 'utf8')) as {
      version: string;
    }
  ).version.split('.')[0],
);

describeWithRedis('RedisNotificationDedupeStore and node-redis command timeouts', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(() => server?.close());

  it.runIf(nodeRedisMajor >= 6)(
    'drops a command queued while the node-redis client reconnects once the store gives up on it, never sending it',
    async () => {
      const client = createClient({
        url: server.url,
        socket: { reconnectStrategy: () => 50 },
      });
      client.on('error', () => undefined);
      await client.connect();
      try {
        const store = new RedisNotificationDedupeStore(client, { prefix: 'timeouts:', commandTimeoutMs: 100 });
        await server.stop();
        await eventually(async () => (client.isReady ? undefined : true), 10_000, 'the client sees Redis gone');
        const error = await store.claim(dedupeKey(), 'while-offline').then(
          () => expect.unreachable('expected a rejection'),
          (rejection: unknown) => rejection,
        );
        expect(error).toBeInstanceOf(RedisDedupeStoreError);
        expect(error).toMatchObject({ operation: 'claim', reason: 'timeout' });
        // The claim, and the release queued behind it, leave the client's queue at twice commandTimeoutMs: a timer
        // that fires before this one.
        await new Promise((resolve) => setTimeout(resolve, 500));

        // Back well within node-redis's own 5-second default, which kept them queued and sent them now.
        await server.restart();
        await eventually(async () => (client.isReady ? true : undefined), 10_000, 'the client reconnects');
        expect(await client.sendCommand(['PING'])).toBe('PONG');
        const stats = String(await client.sendCommand(['INFO', 'commandstats']));
        expect(callsOf(stats, 'ping')).toBeGreaterThanOrEqual(1);
        expect(callsOf(stats, 'evalsha')).toBe(0);
        expect(callsOf(stats, 'eval')).toBe(0);
      } finally {
        client.destroy();
        if (server.pid === undefined) await server.restart();
      }
    },
  );
});
