import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getPayoutsServiceToken, PayoutsModule, type PayoutsService } from 'nestjs-payouts';
import {
  getPayoutRunsToken,
  OnPayoutSent,
  type PayoutRunResult,
  PayoutRunsModule,
  type PayoutRunsService,
} from 'nestjs-payouts/payout-runs';
import { runChild } from '../child-main.js';
import { benchPayoutRequest, createPayoutLoop, payoutRun, RunCompletion, workerArg } from './bench-payouts.js';

/** 11. A payout run against a hand-written loop of `createPayout` with the same concurrency, in one process. */
export interface RunsRunArgs {
  readonly mode: 'run' | 'loop';
  readonly payouts: number;
}

export interface RunsRunResult {
  readonly payoutsPerSecond: number;
}

export interface EnqueueRunResult {
  readonly items: number;
  readonly enqueueMs: number;
}

/** Callers of the loop, and the run's worker concurrency. */
const CONCURRENCY = Number(workerArg('concurrency'));
const baseUrl = `http://127.0.0.1:${Number(workerArg('stub-port'))}`;
const connection = { host: '127.0.0.1', port: Number(workerArg('redis-port')) };

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
  return {
    commands: {
      run: async (args) => {
        const { mode, payouts: total } = args as RunsRunArgs;
        const start = performance.now();
        await (mode === 'run' ? run(total) : loop(total));
        return { payoutsPerSecond: total / ((performance.now() - start) / 1000) } satisfies RunsRunResult;
      },
      enqueue: async (args) => {
        const items = (args as { items: number }).items;
        const batch = Array.from({ length: items }, () => benchPayoutRequest());
        const start = performance.now();
        const enqueued = await idle.enqueue(batch);
        if (enqueued.queued !== items) throw new Error(`queued ${enqueued.queued} of ${items}`);
        return { items, enqueueMs: performance.now() - start } satisfies EnqueueRunResult;
      },
    },
    close: () => app.close(),
  };
});
