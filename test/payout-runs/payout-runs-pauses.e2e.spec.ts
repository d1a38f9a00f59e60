import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

const RETRY_AFTER_S = 3;

/**
 * A provider that takes two payout requests at once: it answers the first `429` with `Retry-After: 3` as soon as the
 * second arrives, holds the second until `release()` answers it `503` without `Retry-After`, and creates every later
 * one.
 */
async function throttlingProvider() {
  const arrivals: { requestId: string; at: number }[] = [];
  let held: ServerResponse | undefined;
  let first: ServerResponse | undefined;
  let throttledAt = 0;
  const json = (response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { request_id: requestId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request_id: string };
      arrivals.push({ requestId, at: Date.now() });
      if (arrivals.length === 1) {
        first = response;
      } else if (arrivals.length === 2) {
        held = response;
        throttledAt = Date.now();
        json(first!, 429, { error: 'slow_down' }, { 'retry-after': String(RETRY_AFTER_S) });
      } else {
        json(response, 201, { id: `po_${requestId}`, status: 'pending' });
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    arrivals,
    /** When the 429 was answered; `0` before. */
    throttledAt: () => throttledAt,
    release: () => json(held!, 503, { error: 'unavailable' }),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

describeWithRedis('pauses of the account queue across workers', () => {
  let redis: RedisServer;
  let provider: Awaited<ReturnType<typeof throttlingProvider>>;
  const apps: RunsApp[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    provider = await throttlingProvider();
  });
  afterAll(async () => {
    await Promise.all(apps.map((started) => started.app.close()));
    await provider?.close();
    await redis?.close();
  });

  it('never cuts a Retry-After pause short: a 503 without Retry-After on the other worker leaves it as long', async () => {
    const options = {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix: 'pauses',
      rateLimit: false as const,
      concurrency: 1,
      backoffMs: 200,
    };
    // Two workers, one payout each at a time: the two first requests are in flight together.
    for (let i = 0; i < 2; i++) apps.push(await startRunsApp(provider.baseUrl, options));
    const ids = ['p-1', 'p-2', 'p-3', 'p-4'];
    await apps[0]!.runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'pauses' },
    );
    const client = new Redis(redis.port, '127.0.0.1');
    try {
      // The 429's pause is in force before the 503 is answered.
      const limiter = `${apps[0]!.runs.queue.qualifiedName}:limiter`;
      await eventually(async () => ((await client.pttl(limiter)) > 1000 ? true : undefined), 15_000, 'the pause');
      provider.release();

      await eventually(
        async () => ((await apps[0]!.runs.progress('pauses'))?.counts.sent === ids.length ? true : undefined),
        30_000,
        'every payout sent',
      );
    } finally {
      client.disconnect();
    }

    // Both throttled requests came again, after the pause, with the two others: none inside the 3 s asked for.
    const later = provider.arrivals.slice(2);
    expect(later.map((arrival) => arrival.requestId).sort()).toEqual(ids);
    const pauseEnd = provider.throttledAt() + RETRY_AFTER_S * 1000;
    expect(later.filter((arrival) => arrival.at < pauseEnd)).toEqual([]);
    const warnings = apps.flatMap((started) => started.logger.messages('warn'));
    expect(warnings.filter((line) => line.includes('HTTP 503'))).toEqual([
      expect.stringMatching(
        /: HTTP 503; the account's queue pauses for 200 ms \(it stays paused for the \d+ ms of a longer pause already asked\)$/,
      ),
    ]);
  }, 60_000);
});
