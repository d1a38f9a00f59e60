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
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import pg from 'pg';
import { runChild } from '../child-main.js';
import { benchPayoutRequest, createPayoutLoop, payoutRun, RunCompletion } from './bench-payouts.js';
import { argValue } from '../command-line.js';

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

/** Callers of the loop, and each run's worker concurrency. */
const CONCURRENCY = Number(argValue('concurrency'));
const baseUrl = `http://127.0.0.1:${Number(argValue('stub-port'))}`;
const connection = { host: '127.0.0.1', port: Number(argValue('redis-port')) };
// The ledger's statements and the relay's: a pool as large as the worker's concurrency, and a few more.
const pool = new pg.Pool({ connectionString: argValue('database-url'), max: CONCURRENCY + 8 });
pool.on('error', () => undefined);

/** Hands each sent payout of either run to the completion the worker waits on. */
@Injectable()
class SentCounter {
  readonly completion = new RunCompletion();

  @OnPayoutSent({ account: 'default' })
  sentWithRedis(result: PayoutRunResult): void {
    this.completion.count(result);
  }

  @OnPayoutSent({ account: 'ledger' })
  sentWithPostgres(result: PayoutRunResult): void {
    this.completion.count(result);
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
  const { completion } = app.get(SentCounter);
  const loop = createPayoutLoop(payouts, CONCURRENCY);
  const runWithRedis = payoutRun(withRedis, completion);
  const runWithPostgres = payoutRun(withPostgres, completion);
  return {
    commands: {
      run: async (args) => {
        const { mode, payouts: total } = args as LedgerRunArgs;
        const start = performance.now();
        await (mode === 'loop' ? loop(total) : mode === 'redis' ? runWithRedis(total) : runWithPostgres(total));
        return { payoutsPerSecond: total / ((performance.now() - start) / 1000) } satisfies LedgerRunResult;
      },
      outbox: async (args) => {
        const items = (args as { items: number }).items;
        const batch = Array.from({ length: items }, () => benchPayoutRequest());
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
