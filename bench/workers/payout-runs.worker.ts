import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type CreatePayoutRequest, getPayoutsServiceToken, PayoutsModule, type PayoutsService } from 'nestjs-payouts';
import {
  getPayoutRunsToken,
  OnPayoutSent,
  type PayoutRunResult,
  PayoutRunsModule,
  type PayoutRunsService,
} from 'nestjs-payouts/payout-runs';
import { runChild } from '../child-main.js';

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

const arg = (name: string) => process.argv.find((value) => value.startsWith(`--${name}=`))?.slice(name.length + 3);
/** Callers of the loop, and the run's worker concurrency. */
const CONCURRENCY = Number(arg('concurrency'));
const baseUrl = `http://127.0.0.1:${Number(arg('stub-port'))}`;
const connection = { host: '127.0.0.1', port: Number(arg('redis-port')) };

let sequence = 0;
function payoutRequest(): CreatePayoutRequest {
  return {
    payout_method: {
      type: 'wallet',
      payment_method: 'mobile_money',
      beneficiary: { name: 'Amina Njoroge', payout_method_details: { phone_number: '254712345678' } },
    },
    amount: { value: '125.50', currency_code: 'KES' },
    country_code: 'KE',
    purpose: 'salary_payment',
    reference: 'March salary',
    request_id: `bench_${process.pid}_${++sequence}`,
  };
}

/** Resolves the run's completion as the sent handler sees each payout. */
@Injectable()
class SentCounter {
  private waiting: { runId: string; left: number; done: () => void } | undefined;

  expect(runId: string, payouts: number): Promise<void> {
    return new Promise((done) => (this.waiting = { runId, left: payouts, done }));
  }

  @OnPayoutSent({ account: 'default' })
  sent(result: PayoutRunResult): void {
    const waiting = this.waiting;
    if (waiting?.runId !== result.runId) return;
    waiting.left -= 1;
    if (waiting.left === 0) waiting.done();
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
  const counter = app.get(SentCounter);
  let runCount = 0;

  /** `CONCURRENCY` callers, each sending its next payout as soon as the last one is answered, until all are sent. */
  const loop = async (total: number): Promise<void> => {
    let left = total;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (left > 0) {
          left -= 1;
          const { status } = await payouts.createPayout(payoutRequest());
          if (status !== 201) throw new Error(`expected 201 from the stub, got ${status}`);
        }
      }),
    );
  };
  const run = async (total: number): Promise<void> => {
    const runId = `bench-${process.pid}-${++runCount}`;
    const done = counter.expect(runId, total);
    const enqueued = await runs.enqueue(
      Array.from({ length: total }, () => payoutRequest()),
      { runId },
    );
    if (enqueued.queued !== total) throw new Error(`queued ${enqueued.queued} of ${total}`);
    await done;
  };
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
        const batch = Array.from({ length: items }, () => payoutRequest());
        const start = performance.now();
        const enqueued = await idle.enqueue(batch);
        if (enqueued.queued !== items) throw new Error(`queued ${enqueued.queued} of ${items}`);
        return { items, enqueueMs: performance.now() - start } satisfies EnqueueRunResult;
      },
    },
    close: () => app.close(),
  };
});
