import { findRedisServer, RedisServer } from '../../test/support/redis-server.js';
import { BenchChild } from '../child-processes.js';
import type { BenchSettings } from '../settings.js';
import { median } from '../stats.js';
import { formatRatio, printTable } from '../table.js';
import type { EnqueueRunResult, RunsRunArgs, RunsRunResult } from '../workers/payout-runs.worker.js';

/** Callers of the loop, and the run's worker concurrency. */
const CONCURRENCY = 32;
const TARGET = 0.9;
const LATENCY = '20-50';
const ENQUEUED = 10_000;
const MODES: RunsRunArgs['mode'][] = ['run', 'loop'];

/**
 * Item 11: payouts per second of a run (limit off) beside a hand-written loop of `createPayout` with the same
 * concurrency, against a local stub answering in 20 to 50 ms; and the time to enqueue 10,000 payouts.
 */
export async function measurePayoutRuns(settings: BenchSettings): Promise<void> {
  if (!findRedisServer()) {
    console.log('\nPayout runs left out: redis-server is not on the PATH.');
    return;
  }
  // As many payouts as the loop sends in about the phase's run length, at 32 callers of about 35 ms.
  const payouts = Math.max(500, Math.round((settings.durationSeconds * CONCURRENCY * 1000) / 35 / 100) * 100);
  const redis = await RedisServer.start();
  try {
    const stub = await BenchChild.start('payouts-stub', './servers/payouts-stub.server.js', [
      `--latency-ms=${LATENCY}`,
    ]);
    try {
      const worker = await BenchChild.start('payout-runs', './workers/payout-runs.worker.js', [
        `--stub-port=${stub.port}`,
        `--redis-port=${redis.port}`,
        `--concurrency=${CONCURRENCY}`,
      ]);
      try {
        const timeoutMs = 120_000;
        const run = (mode: RunsRunArgs['mode'], total: number) =>
          worker.call<RunsRunResult>('run', { mode, payouts: total } satisfies RunsRunArgs, timeoutMs);
        for (const mode of MODES) await run(mode, Math.round(payouts / 4));
        const rounds: Map<RunsRunArgs['mode'], RunsRunResult>[] = [];
        const enqueues: EnqueueRunResult[] = [];
        for (let round = 0; round < settings.rounds; round++) {
          const samples = new Map<RunsRunArgs['mode'], RunsRunResult>();
          for (const mode of MODES) samples.set(mode, await run(mode, payouts));
          rounds.push(samples);
          enqueues.push(await worker.call<EnqueueRunResult>('enqueue', { items: ENQUEUED }, timeoutMs));
        }
        report(settings, payouts, rounds, enqueues);
      } finally {
        await worker.stop();
      }
    } finally {
      await stub.stop();
    }
  } finally {
    await redis.close();
  }
}

function report(
  settings: BenchSettings,
  payouts: number,
  rounds: Map<RunsRunArgs['mode'], RunsRunResult>[],
  enqueues: EnqueueRunResult[],
): void {
  const ratio = median(rounds.map((round) => round.get('run')!.payoutsPerSecond / round.get('loop')!.payoutsPerSecond));
  const enqueueMs = median(enqueues.map((sample) => sample.enqueueMs));
  printTable(
    `Payout runs: ${settings.rounds} rounds of ${payouts} payouts, ${CONCURRENCY} at once, stub answering in ` +
      `${LATENCY} ms (medians)`,
    ['Measure', 'Value', 'Target', 'Met'],
    [
      ['11 run (limit off), payouts/s', median(rounds.map((round) => round.get('run')!.payoutsPerSecond))],
      ['11 loop of createPayout, payouts/s', median(rounds.map((round) => round.get('loop')!.payoutsPerSecond))],
      ['run ÷ loop', formatRatio(ratio), `≥ ${TARGET.toFixed(2)}x`, ratio >= TARGET ? 'yes' : 'no'],
      [`enqueue ${ENQUEUED} payouts, ms`, Math.round(enqueueMs)],
      ['enqueue, payouts/s', Math.round(ENQUEUED / (enqueueMs / 1000))],
    ],
  );
}
