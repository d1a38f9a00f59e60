import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeServerProcess } from '../node-server-process.js';
import {
  ADAPTERS,
  type AdapterName,
  cardAdded,
  type HttpReply,
  post,
} from '../notifications/notifications-test-app.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { REDIS_CLIENTS, type RedisClientKind } from './redis-clients.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APP = fileURLToPath(new URL('./dedupe-app.mjs', import.meta.url));
const PATH = 'payouts/notifications';
const ACK = '{"ResultCode":0}';
const IN_PROGRESS = '{"statusCode":409,"message":"This notification is being handled; send it again later"}';
const FAILED = '{"statusCode":500,"message":"The notification could not be handled"}';
/** Long enough that a re-send right after a crash surely comes within it, short enough to wait for in a test. */
const LEASE_MS = 6_000;
// Generous, so that 200 concurrent claims on a busy machine never time out; the outage test waits for it.
const COMMAND_TIMEOUT_MS = 2_000;

interface AppInstance {
  readonly process: NodeServerProcess;
  readonly url: string;
}

/** Starts one instance: the app script on the built package, in its own process with its own Redis client. */
async function startInstance(
  adapter: AdapterName,
  client: RedisClientKind,
  redisUrl: string,
  extra: readonly string[] = [],
): Promise<AppInstance> {
  const args = [
    APP,
    `--adapter=${adapter}`,
    `--client=${client}`,
    `--redis-url=${redisUrl}`,
    `--lease-ms=${LEASE_MS}`,
    `--command-timeout-ms=${COMMAND_TIMEOUT_MS}`,
    ...extra,
  ];
  const ready = /^listening (\d+)$/;
  const started = await NodeServerProcess.start(args, { cwd: ROOT, ready, timeoutMs: 20_000 });
  return { process: started.process, url: `http://127.0.0.1:${started.ready[1]}/${PATH}` };
}

const paymentMethodId = (notification: Record<string, unknown>) => (notification.paymentMethod as { id: string }).id;

describeWithRedis('several app processes sharing the Redis dedupe store', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(() => redis?.close());

  describe.each(REDIS_CLIENTS)('with %s', (client) => {
    const instances = {} as Record<AdapterName, AppInstance>;
    beforeAll(async () => {
      await Promise.all(
        ADAPTERS.map(async (adapter) => {
          instances[adapter] = await startInstance(adapter, client, redis.url);
        }),
      );
    }, 40_000);
    afterAll(async () => {
      await Promise.all(ADAPTERS.map((adapter) => instances[adapter]?.process.kill()));
    });

    const send = (adapter: AdapterName, notification: Record<string, unknown>) =>
      post(instances[adapter].url, notification);
    /** Handler lines of one notification, per instance, as `start` and `done` counts. */
    const calls = (notification: Record<string, unknown>) => {
      const id = paymentMethodId(notification);
      return Object.fromEntries(
        ADAPTERS.map((adapter) => {
          const { process } = instances[adapter];
          return [
            adapter,
            {
              start: process.linesMatching(new RegExp(`^handler-start ${id}$`)).length,
              done: process.linesMatching(new RegExp(`^handler-done ${id}$`)).length,
            },
          ];
        }),
      ) as Record<AdapterName, { start: number; done: number }>;
    };
    /**
     * The handler lines expected of one notification. An instance prints them before it replies, but its output reaches
     * this process through a pipe of its own, which on a loaded machine can be read after the reply: waited for.
     */
    const expectCalls = async (
      notification: Record<string, unknown>,
      expected: Record<AdapterName, { start: number; done: number }>,
    ) => {
      await expect.poll(() => calls(notification), { timeout: 10_000 }).toEqual(expected);
    };
    const expectReply = (reply: HttpReply, status: number, body: string) => {
      expect([reply.status, reply.body]).toEqual([status, body]);
    };

    it('runs the handler once for 200 concurrent deliveries over an Express and a Fastify instance', async () => {
      const notification = cardAdded({ testBehaviour: { delayMs: 200 } });
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, index) => send(ADAPTERS[index % 2]!, notification)),
      );

      const acks = replies.filter((reply) => reply.status === 200);
      const inProgress = replies.filter((reply) => reply.status === 409);
      expect(acks.length + inProgress.length).toBe(200);
      expect(acks.length).toBeGreaterThanOrEqual(1);
      for (const reply of acks) expect(reply.body).toBe(ACK);
      for (const reply of inProgress) expect(reply.body).toBe(IN_PROGRESS);
      await expect
        .poll(
          () => {
            const { express, fastify } = calls(notification);
            return { start: express.start + fastify.start, done: express.done + fastify.done };
          },
          { timeout: 10_000 },
        )
        .toEqual({ start: 1, done: 1 });
      const handled = calls(notification);

      // A re-send to the instance that did not run the handler is acknowledged without running it.
      const other = handled.express.done === 1 ? 'fastify' : 'express';
      expectReply(await send(other, notification), 200, ACK);
      expect(calls(notification)).toEqual(handled);
    });

    it('answers 500 when the handler fails on one instance; the re-send to the other runs it once', async () => {
      const notification = cardAdded({ testBehaviour: { failOn: 'express' } });
      expectReply(await send('express', notification), 500, FAILED);
      expectReply(await send('fastify', notification), 200, ACK);
      expectReply(await send('express', notification), 200, ACK);
      await expectCalls(notification, { express: { start: 1, done: 0 }, fastify: { start: 1, done: 1 } });
    });

    it('answers 500 within commandTimeoutMs while Redis is down, and handles once when it is back', async () => {
      const notification = cardAdded();
      await redis.stop();
      for (const adapter of ADAPTERS) {
        const sentAt = Date.now();
        expectReply(await send(adapter, notification), 500, FAILED);
        // Without the limit the delivery would wait for Redis; the margin is for a loaded machine.
        expect(Date.now() - sentAt).toBeLessThan(COMMAND_TIMEOUT_MS + 3_000);
      }
      expect(calls(notification)).toEqual({ express: { start: 0, done: 0 }, fastify: { start: 0, done: 0 } });

      await redis.restart();
      // Each instance's client reconnects on its own; until it has, a delivery there is a 500 without a handler call.
      // A claim that timed out in the outage may still be applied from the client's offline queue, and released just
      // after by the release queued behind it (both through EVAL once the restarted server answers NOSCRIPT): a
      // delivery in between gets a 409, also without a handler call, and the service would send it again.
      for (const adapter of ADAPTERS) {
        const reply = await eventually(
          async () => {
            const answer = await send(adapter, notification);
            return answer.status === 500 || answer.status === 409 ? undefined : answer;
          },
          15_000,
          `${adapter} answers again after Redis is back`,
        );
        expectReply(reply, 200, ACK);
      }
      await expectCalls(notification, { express: { start: 1, done: 1 }, fastify: { start: 0, done: 0 } });
    }, 30_000);

    it('lets a re-send wait for the lease of an instance killed mid-handler, then runs the handler once', async () => {
      const notification = cardAdded({ testBehaviour: { hangOn: 'express' } });
      const { process } = instances.express;
      const lost = send('express', notification).catch((error: unknown) => error);
      await process.waitForLine(new RegExp(`^handler-start ${paymentMethodId(notification)}$`), 10_000);
      await process.kill();
      expect(await lost).toBeInstanceOf(Error);

      expectReply(await send('fastify', notification), 409, IN_PROGRESS);
      await eventually(
        async () => ((await send('fastify', notification)).status === 200 ? true : undefined),
        LEASE_MS + 10_000,
        'the re-send is acknowledged once the lease has expired',
      );
      await expect.poll(() => calls(notification).fastify, { timeout: 10_000 }).toEqual({ start: 1, done: 1 });
      instances.express = await startInstance('express', client, redis.url);
    }, 45_000);
  });

  describe.each(REDIS_CLIENTS)('with two handlers, with %s', (client) => {
    const instances = {} as Record<AdapterName, AppInstance>;
    beforeAll(async () => {
      await Promise.all(
        ADAPTERS.map(async (adapter) => {
          instances[adapter] = await startInstance(adapter, client, redis.url, ['--mailer']);
        }),
      );
    }, 40_000);
    afterAll(async () => {
      await Promise.all(ADAPTERS.map((adapter) => instances[adapter]?.process.kill()));
    });

    const lines = (adapter: AdapterName, pattern: string) =>
      instances[adapter].process.linesMatching(new RegExp(`^${pattern}$`));

    it('runs on the re-send to the other instance only the handler that failed on the first', async () => {
      const notification = cardAdded({ testBehaviour: { mailerFailOn: 'express' } });
      const id = paymentMethodId(notification);

      const first = await post(instances.express.url, notification);
      const second = await post(instances.fastify.url, notification);
      const third = await post(instances.express.url, notification);

      expect([first.status, first.body]).toEqual([500, FAILED]);
      expect([second.status, second.body]).toEqual([200, ACK]);
      expect([third.status, third.body]).toEqual([200, ACK]);
      // An instance's output can be read after its reply on a loaded machine: waited for.
      await expect
        .poll(() => lines('fastify', `mailer-start ${id} \\d+`), { timeout: 10_000 })
        .toEqual([`mailer-start ${id} 2`]);
      await expect.poll(() => lines('express', `handler-done ${id}`), { timeout: 10_000 }).toHaveLength(1);
      expect(lines('fastify', `handler-start ${id}`)).toEqual([]);
      expect(lines('express', `mailer-start ${id} \\d+`)).toEqual([`mailer-start ${id} 1`]);
    });
  });
});
