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
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import pg from 'pg';
import { runChild } from '../child-main.js';

/** 12. A run with the PostgreSQL ledger, beside one with the Redis store and a loop of `createPayout`, in one process. */
export interface LedgerRunArgs {
  readonly mode: 'redis' | 'postgres' | 'loop';
  readonly payouts: number;
}

export interface LedgerRunResult {
  readonly payoutsPerSecond: number;
}

export interface OutboxEnqueueResult {
  readonly items: number;
  /** From `BEGIN` to `COMMIT` of one transaction that writes every item with `enqueue(items, { db })`. */
  readonly transactionMs: number;
}

const arg = (name: string) => process.argv.find((value) => value.startsWith(`--${name}=`))?.slice(name.length + 3);
/** Callers of the loop, and each run's worker concurrency. */
const CONCURRENCY = Number(arg('concurrency'));
const baseUrl = `http://127.0.0.1:${Number(arg('stub-port'))}`;
const connection = { host: '127.0.0.1', port: Number(arg('redis-port')) };
// The ledger's statements and the relay's: a pool as large as the worker's concurrency, and a few more.
const pool = new pg.Pool({ connectionString: arg('database-url'), max: CONCURRENCY + 8 });
pool.on('error', () => undefined);

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

/** Resolves a run's completion as the sent handlers of its account see each payout. */
@Injectable()
class SentCounter {
  private waiting: { runId: string; left: number; done: () => void } | undefined;

  expect(runId: string, payouts: number): Promise<void> {
    return new Promise((done) => (this.waiting = { runId, left: payouts, done }));
  }

  @OnPayoutSent({ account: 'default' })
  sentWithRedis(result: PayoutRunResult): void {
    this.count(result);
  }

  @OnPayoutSent({ account: 'ledger' })
  sentWithPostgres(result: PayoutRunResult): void {
    this.count(result);
  }

  private count(result: PayoutRunResult): void {
    const waiting = this.waiting;
    if (waiting?.runId !== result.runId) return;
    waiting.left -= 1;
    if (waiting.left === 0) waiting.done();
  }
}

const account = (name?: string) =>
  PayoutsModule.forRoot({
    ...(name && { name }),
    baseUrl,
    apiKey: 'bench-api-key',
    accessToken: 'bench-token',
    notifications: false,
  });

@Module({
  imports: [
    account(),
    account('ledger'),
    account('outbox'),
    PayoutRunsModule.forRoot({ connection, prefix: 'bench-redis', rateLimit: false, concurrency: CONCURRENCY }),
    PayoutRunsModule.forRoot({
      account: 'ledger',
      connection,
      prefix: 'bench-ledger',
      rateLimit: false,
      concurrency: CONCURRENCY,
      ledger: payoutLedgerPostgres({ pool, migrate: true }),
    }),
    // Where the outbox's enqueue is timed: no worker, so no relay, takes these payouts.
    PayoutRunsModule.forRoot({
      account: 'outbox',
      connection,
      prefix: 'bench-outbox',
      rateLimit: false,
      worker: false,
      ledger: payoutLedgerPostgres({ pool }),
    }),
  ],
  providers: [SentCounter],
})
class LedgerBenchModule {}

await runChild(async () => {
  const app = await NestFactory.createApplicationContext(LedgerBenchModule, { logger: ['error'] });
  const payouts = app.get<PayoutsService>(getPayoutsServiceToken());
  const withRedis = app.get<PayoutRunsService>(getPayoutRunsToken());
  const withPostgres = app.get<PayoutRunsService>(getPayoutRunsToken('ledger'));
  const outbox = app.get<PayoutRunsService>(getPayoutRunsToken('outbox'));
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
  const run = async (runs: PayoutRunsService, total: number): Promise<void> => {
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
        const { mode, payouts: total } = args as LedgerRunArgs;
        const start = performance.now();
        await (mode === 'loop' ? loop(total) : run(mode === 'redis' ? withRedis : withPostgres, total));
        return { payoutsPerSecond: total / ((performance.now() - start) / 1000) } satisfies LedgerRunResult;
      },
      outbox: async (args) => {
        const items = (args as { items: number }).items;
        const batch = Array.from({ length: items }, () => payoutRequest());
        const client = await pool.connect();
        try {
          const start = performance.now();
          await client.query('BEGIN');
          const enqueued = await outbox.enqueue(batch, { db: client });
          await client.query('COMMIT');
          const transactionMs = performance.now() - start;
          if (enqueued.pending !== items) throw new Error(`wrote ${enqueued.pending} of ${items}`);
          return { items, transactionMs } satisfies OutboxEnqueueResult;
        } finally {
          client.release();
        }
      },
    },
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
});
