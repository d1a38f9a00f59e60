import { findPostgresBin, PostgresServer } from '../../test/support/postgres-server.js';
import { findRedisServer, RedisServer } from '../../test/support/redis-server.js';
import { BenchChild } from '../child-processes.js';
import type { BenchSettings } from '../settings.js';
import { median } from '../stats.js';
import { formatRatio, printTable } from '../table.js';
import type { LedgerRunArgs, LedgerRunResult, OutboxEnqueueResult } from '../workers/payout-ledger.worker.js';

/** Callers of the loop, and each run's worker concurrency: as in item 11. */
const CONCURRENCY = 32;
const LATENCY = '20-50';
/** The size of the run. */
const PAYOUTS = 2000;
const ENQUEUED = 10_000;
const TARGET = 0.8;
const MODES: LedgerRunArgs['mode'][] = ['redis', 'postgres', 'loop'];

/**
 * Item 12: a run of 2,000 with the PostgreSQL ledger beside the same run with the Redis store and a loop of
 * `createPayout`, against the local stub; and 10,000 payouts enqueued inside one transaction (the outbox).
 */
export async function measurePayoutLedger(settings: BenchSettings): Promise<void> {
  if (!findRedisServer() || !findPostgresBin()) {
    console.log('\nPayout ledger left out: it needs redis-server on the PATH and PostgreSQL (initdb, postgres).');
    return;
  }
  // Commits reach the disk, as in production: the ledger's cost includes its durability.
  const [redis, postgres] = await Promise.all([RedisServer.start(), PostgresServer.start({ durable: true })]);
  try {
    const database = await postgres.createDatabase('bench');
    const stub = await BenchChild.start('payouts-stub', './servers/payouts-stub.server.js', [
      `--latency-ms=${LATENCY}`,
    ]);
    try {
      const worker = await BenchChild.start('payout-ledger', './workers/payout-ledger.worker.js', [
        `--stub-port=${stub.port}`,
        `--redis-port=${redis.port}`,
        `--database-url=${postgres.url(database)}`,
        `--concurrency=${CONCURRENCY}`,
      ]);
      try {
        const timeoutMs = 180_000;
        const run = (mode: LedgerRunArgs['mode'], payouts: number) =>
          worker.call<LedgerRunResult>('run', { mode, payouts } satisfies LedgerRunArgs, timeoutMs);
        for (const mode of MODES) await run(mode, PAYOUTS / 4);
        const rounds: Map<LedgerRunArgs['mode'], LedgerRunResult>[] = [];
        const enqueues: OutboxEnqueueResult[] = [];
        for (let round = 0; round < settings.rounds; round++) {
          const samples = new Map<LedgerRunArgs['mode'], LedgerRunResult>();
          for (const mode of MODES) samples.set(mode, await run(mode, PAYOUTS));
          rounds.push(samples);
          enqueues.push(await worker.call<OutboxEnqueueResult>('outbox', { items: ENQUEUED }, timeoutMs));
        }
        report(settings, rounds, enqueues);
      } finally {
        await worker.stop();
      }
    } finally {
      await stub.stop();
    }
  } finally {
    await Promise.all([redis.close(), postgres.close()]);
  }
}

function report(
  settings: BenchSettings,
  rounds: Map<LedgerRunArgs['mode'], LedgerRunResult>[],
  enqueues: OutboxEnqueueResult[],
): void {
  const rate = (mode: LedgerRunArgs['mode']) => median(rounds.map((round) => round.get(mode)!.payoutsPerSecond));
  const ratio = (over: LedgerRunArgs['mode'], under: LedgerRunArgs['mode']) =>
    median(rounds.map((round) => round.get(over)!.payoutsPerSecond / round.get(under)!.payoutsPerSecond));
  const ledgerOverRedis = ratio('postgres', 'redis');
  const transactionMs = median(enqueues.map((sample) => sample.transactionMs));
  printTable(
    `Payout ledger: ${settings.rounds} rounds of a run of ${PAYOUTS}, ${CONCURRENCY} at once, stub answering in ` +
      `${LATENCY} ms, PostgreSQL with fsync on (medians)`,
    ['Measure', 'Value', 'Target', 'Met'],
    [
      ['12 run with the Redis store, payouts/s', rate('redis')],
      ['12 run with the PostgreSQL ledger, payouts/s', rate('postgres')],
      ['12 loop of createPayout, payouts/s', rate('loop')],
      [
        'PostgreSQL ledger ÷ Redis store',
        formatRatio(ledgerOverRedis),
        `≥ ${TARGET.toFixed(2)}x`,
        ledgerOverRedis >= TARGET ? 'yes' : 'no',
      ],
      ['PostgreSQL ledger ÷ loop', formatRatio(ratio('postgres', 'loop'))],
      ['Redis store ÷ loop', formatRatio(ratio('redis', 'loop'))],
      [`enqueue ${ENQUEUED} in one transaction (outbox), BEGIN to COMMIT, ms`, Math.round(transactionMs)],
      ['outbox enqueue, payouts/s', Math.round(ENQUEUED / (transactionMs / 1000))],
    ],
  );
}
