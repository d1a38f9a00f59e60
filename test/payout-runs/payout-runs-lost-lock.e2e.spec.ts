import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { Queue } from 'bullmq';
import { payoutJobId, payoutRunsQueueName } from 'nestjs-payouts/payout-runs';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { payout, type RunsApp, startRunsApp, starveEventLoop } from './payout-runs-test-app.js';

const LOCK_MS = 500;

/** A provider that holds every payout request until `release()` answers them all `201`. */
async function holdingProvider() {
  const received: string[] = [];
  const held: { requestId: string; response: ServerResponse }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { request_id: requestId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request_id: string };
      received.push(requestId);
      held.push({ requestId, response });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received,
    release() {
      for (const { requestId, response } of held.splice(0)) {
        response.writeHead(201, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ id: `po_${requestId}`, status: 'pending' }));
      }
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

describeWithRedis('a payout whose worker loses its lock (event loop starved)', () => {
  let redis: RedisServer;
  let started: RunsApp | undefined;
  let queue: Queue | undefined;
  const closing: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterEach(async () => {
    await started?.app.close();
    await queue?.close();
    for (const close of closing.splice(0)) await close();
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('while its request is out: parked as unknown by the job run again, never sent twice, the late reply changes nothing', async () => {
    const provider = await holdingProvider();
    closing.push(() => provider.close());
    started = await startRunsApp(provider.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix: 'lost-lock',
      rateLimit: false,
      lockDurationMs: LOCK_MS,
    });
    const { runs, results, logger } = started;
    await runs.enqueue([payout('ll-1')], { runId: 'starved' });
    await eventually(async () => (provider.received.length === 1 ? true : undefined), 15_000, 'the request is out');

    // Longer than the lock: it expires in Redis, which this process cannot renew meanwhile.
    starveEventLoop(LOCK_MS * 4);

    // BullMQ finds the job stalled and runs it again: the marker without an outcome parks the payout.
    const parked = await eventually(
      async () => {
        const progress = await runs.progress('starved');
        return progress?.counts.unknown === 1 && results.unknown.length === 1 ? progress : undefined;
      },
      15_000,
      'the payout is parked',
    );
    expect(parked.counts).toMatchObject({ queued: 0, sending: 0, sent: 0, unknown: 1, total: 1 });
    expect(results.unknown).toMatchObject([{ requestId: 'll-1', outcome: 'unknown', error: { name: 'Interrupted' } }]);
    expect(logger.messages('warn')).toContain(
      'Payout ll-1 of run starved: its worker stopped while sending; parked as unknown, not sent again',
    );

    // The first attempt's reply comes last: it is logged, and the payout stays parked for a person to resolve.
    provider.release();
    await eventually(
      async () => (logger.messages('error').some((line) => line.includes('after it was parked')) ? true : undefined),
      15_000,
      'the late reply',
    );
    expect(logger.messages('error')).toContain(
      'Payout ll-1 of run starved ended sent after it was parked as unknown (this worker had lost its lock); ' +
        'resolve it with that in mind',
    );
    expect((await runs.progress('starved'))!.counts).toMatchObject({ sending: 0, sent: 0, unknown: 1 });
    expect((await runs.listUnknown()).payouts).toMatchObject([{ requestId: 'll-1', error: { name: 'Interrupted' } }]);
    expect(results.sent).toEqual([]);
    expect(provider.received).toEqual(['ll-1']);
  }, 60_000);

  it('while the handlers of the payout that completes its run run: the job run again runs none of them again', async () => {
    const provider = await MockPayoutsProvider.start(() => ({ kind: 'created' }), { minLatencyMs: 1, maxLatencyMs: 5 });
    closing.push(() => provider.close());
    started = await startRunsApp(provider.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix: 'lost-lock-handlers',
      rateLimit: false,
      lockDurationMs: LOCK_MS,
    });
    queue = new Queue(payoutRunsQueueName(), {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix: 'lost-lock-handlers',
    });
    const { runs, results } = started;
    // The sent handler of the run's only payout keeps the event loop busy past the lock, before the job is finished.
    results.starveOnSentMs = LOCK_MS * 4;

    await runs.enqueue([payout('lh-1')], { runId: 'starved-handlers' });

    // BullMQ could not mark the job completed without its lock: it finds it stalled and runs it again, to the end.
    const job = await eventually(
      async () => {
        if ((await queue!.getJobState(payoutJobId('lh-1'))) !== 'completed') return undefined;
        // Read once it is completed, so that what is read holds its return value.
        const current = await queue!.getJob(payoutJobId('lh-1'));
        return current && current.attemptsStarted > 1 ? current : undefined;
      },
      15_000,
      'the job run again and completed',
    );
    expect(job.returnvalue).toBe('sent');
    expect(results.sent.map((result) => result.requestId)).toEqual(['lh-1']);
    expect(results.completed).toMatchObject([{ runId: 'starved-handlers', counts: { sent: 1, total: 1 } }]);
    expect(provider.processedCounts()).toEqual(new Map([['lh-1', 1]]));
  }, 60_000);
});
