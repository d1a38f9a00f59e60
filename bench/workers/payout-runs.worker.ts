import 'reflect-metadata';
import { hash } from 'node:crypto';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue, Worker } from 'bullmq';
import { type CreatePayoutRequest, getPayoutsServiceToken, PayoutsModule, type PayoutsService } from 'nestjs-payouts';
import {
  getPayoutRunsToken,
  OnPayoutSent,
  type PayoutRunResult,
  PayoutRunsModule,
  type PayoutRunsService,
} from 'nestjs-payouts/payout-runs';
import { runChild } from '../child-main.js';
import { benchPayoutRequest, createPayoutLoop, payoutRun, RunCompletion } from './bench-payouts.js';
import { argValue } from '../command-line.js';

/** 11. A payout run against a hand-written loop of `createPayout` with the same concurrency, in one process. */
export interface RunsRunArgs {
  /**
   * A payout run; BullMQ alone with `createPayout` as its processor, the floor under a run; the hand-written loop; and
   * the same payout run again, timed apart (A/A): how far two measures of the same code drift within one phase run.
   */
  readonly mode: 'run' | 'bullmq' | 'loop' | 'run-again';
  readonly payouts: number;
}

export interface RunsRunResult {
  readonly payoutsPerSecond: number;
  /** This process's CPU (every thread) per payout, from the call to the last payout sent. */
  readonly cpuMicrosPerPayout: number;
  /** Its CPU ÷ the wall time: near 1, one core's worth, its event loop had no time to spare. */
  readonly busyShare: number;
}

export interface EnqueueRunResult {
  readonly items: number;
  readonly enqueueMs: number;
  /** The floor under `enqueueMs`: BullMQ's `addBulk` of the same jobs alone, in the same chunks, with no claim. */
  readonly addBulkMs: number;
}

/** The package's own chunk size, adds in flight and job options (the defaults of `PayoutRunsModule`). */
const CHUNK = 500;
const ADDS_IN_FLIGHT = 2;
const JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 5000 },
  removeOnComplete: { age: 30 * 86_400 },
  removeOnFail: { age: 30 * 86_400 },
};

/** Jobs as a run adds them (name, data, options, an id hashed from the `request_id`), without a run's claims. */
function payoutJobs(count: number, runId: string) {
  return Array.from({ length: count }, () => {
    const request = benchPayoutRequest();
    const jobId = `payout-${hash('sha256', request.request_id, 'hex')}`;
    return { name: 'payout', data: { request, runId }, opts: { jobId, ...JOB_OPTIONS } };
  });
}

/** Adds `jobs` as `enqueue()` does: in chunks of 500, two `addBulk` calls in flight at a time. */
async function addInChunks(queue: Queue, jobs: ReturnType<typeof payoutJobs>): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let at = next; at < jobs.length; at = next) {
      next += CHUNK;
      await queue.addBulk(jobs.slice(at, at + CHUNK));
    }
  };
  await Promise.all(Array.from({ length: ADDS_IN_FLIGHT }, lane));
}

/** Callers of the loop, and the run's worker concurrency. */
const CONCURRENCY = Number(argValue('concurrency'));
const baseUrl = `http://127.0.0.1:${Number(argValue('stub-port'))}`;
const connection = { host: '127.0.0.1', port: Number(argValue('redis-port')) };

/** Hands each sent payout to the completion the worker waits on. */
@Injectable()
class SentCounter {
  readonly completion = new RunCompletion();

  @OnPayoutSent({ account: 'default' })
  sent(result: PayoutRunResult): void {
    this.completion.count(result);
  }
}

@Module({
  imports: [
    PayoutsModule.forRoot({ baseUrl, apiKey: 'bench-api-key', accessToken: 'bench-token', notifications: false }),
    PayoutsModule.forRoot({
      name: 'idle',
      baseUrl,
      apiKey: 'bench-api-key',
      accessToken: 'bench-token',
      notifications: false,
    }),
    PayoutRunsModule.forRoot({ connection, rateLimit: false, concurrency: CONCURRENCY }),
    // Where the enqueue time is measured: no worker takes these jobs.
    PayoutRunsModule.forRoot({ account: 'idle', connection, rateLimit: false, worker: false }),
  ],
  providers: [SentCounter],
})
class RunsBenchModule {}

await runChild(async () => {
  const app = await NestFactory.createApplicationContext(RunsBenchModule, { logger: ['error'] });
  const payouts = app.get<PayoutsService>(getPayoutsServiceToken());
  const runs = app.get<PayoutRunsService>(getPayoutRunsToken());
  const idle = app.get<PayoutRunsService>(getPayoutRunsToken('idle'));
  const loop = createPayoutLoop(payouts, CONCURRENCY);
  const run = payoutRun(runs, app.get(SentCounter).completion);
  // A queue of its own, which no worker takes jobs from: where the floor of an enqueue is timed.
  const floor = new Queue('bench-add-bulk-floor', { connection });
  const addBulkAlone = async (items: number): Promise<number> => {
    const jobs = payoutJobs(items, 'floor');
    const start = performance.now();
    await addInChunks(floor, jobs);
    return performance.now() - start;
  };
  // BullMQ alone: the same jobs added in the same chunks, a worker of the same concurrency whose processor only sends
  // the payout, with none of a run's marks, limits or handlers. What a run costs above it is the package's.
  const bare = new Queue('bench-bare-bullmq', { connection });
  let bareDone: { left: number; done: () => void } | undefined;
  const bareWorker = new Worker(
    'bench-bare-bullmq',
    async (job) => {
      const { status } = await payouts.createPayout((job.data as { request: CreatePayoutRequest }).request);
      if (status !== 201) throw new Error(`expected 201 from the stub, got ${status}`);
    },
    { connection, concurrency: CONCURRENCY },
  );
  bareWorker.on('completed', () => {
    if (bareDone && --bareDone.left === 0) bareDone.done();
  });
  const bareRun = async (total: number): Promise<void> => {
    const done = new Promise<void>((resolve) => (bareDone = { left: total, done: resolve }));
    await addInChunks(bare, payoutJobs(total, 'bare'));
    await done;
  };
  return {
    commands: {
      run: async (args) => {
        const { mode, payouts: total } = args as RunsRunArgs;
        const start = performance.now();
        const cpuBefore = process.cpuUsage();
        await (mode === 'bullmq' ? bareRun(total) : mode === 'loop' ? loop(total) : run(total));
        const wallMicros = (performance.now() - start) * 1000;
        const cpu = process.cpuUsage(cpuBefore);
        return {
          payoutsPerSecond: total / (wallMicros / 1e6),
          cpuMicrosPerPayout: (cpu.user + cpu.system) / total,
          busyShare: (cpu.user + cpu.system) / wallMicros,
        } satisfies RunsRunResult;
      },
      enqueue: async (args) => {
        const items = (args as { items: number }).items;
        const batch = Array.from({ length: items }, () => benchPayoutRequest());
        const start = performance.now();
        const enqueued = await idle.enqueue(batch);
        const enqueueMs = performance.now() - start;
        if (enqueued.queued !== items) throw new Error(`queued ${enqueued.queued} of ${items}`);
        return { items, enqueueMs, addBulkMs: await addBulkAlone(items) } satisfies EnqueueRunResult;
      },
    },
    close: async () => {
      await bareWorker.close();
      await bare.close();
      await floor.close();
      await app.close();
    },
  };
});
