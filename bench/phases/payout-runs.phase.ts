import { findRedisServer, RedisServer } from '../../test/support/redis-server.js';
import { BenchChild } from '../child-processes.js';
import type { BenchSettings } from '../settings.js';
import { type Spread, spreadOf } from '../stats.js';
import { formatSpread, printTable } from '../table.js';
import type { EnqueueRunResult, RunsRunArgs, RunsRunResult } from '../workers/payout-runs.worker.js';

/** Callers of the loop, and the run's worker concurrency. */
const CONCURRENCY = 32;
/** A run with twice as many payouts in flight: what a higher `concurrency` sends (see docs/payout-runs.md). */
const WIDER_CONCURRENCY = 2 * CONCURRENCY;
/** Payouts of each run, and of each loop beside it. */
const PAYOUTS = 2_000;
const TARGET = 0.95;
const LATENCY = '20-50';
const ENQUEUED = 10_000;
/** Most milliseconds to enqueue 10,000 payouts, on a quiet machine. */
const ENQUEUE_TARGET_MS = 500;
const MODES: RunsRunArgs['mode'][] = ['run', 'bullmq', 'loop', 'run-again'];
/** How far the run may be from itself measured again (A/A) before the phase's ratios say more about noise than code. */
const AA_TOLERANCE = 0.05;

/**
 * Item 11: payouts per second of a run (limit off) beside a hand-written loop of `createPayout` with the same
 * concurrency, against a local stub answering in 20 to 50 ms; and the time to enqueue 10,000 payouts. Beside each mode,
 * the worker process's CPU per payout and its CPU ÷ wall time: all three share one event loop, so a mode whose process
 * is busy near one core's worth is bound by that CPU, not by the stub's answers. Then the same run with twice as many
 * payouts in flight, in a worker of its own: what a user who needs more gets by raising `concurrency`.
 */
export async function measurePayoutRuns(settings: BenchSettings): Promise<void> {
  if (!findRedisServer()) {
    console.log('\nPayout runs left out: redis-server is not on the PATH.');
    return;
  }
  // Fewer with --quick, so that its rounds stay short.
  const payouts = settings.durationSeconds >= 8 ? PAYOUTS : 500;
  // Whatever has started is stopped, last started first, however far the start got.
  const started: { stop(): Promise<void> }[] = [];
  const start = async <T extends { stop(): Promise<void> }>(starting: Promise<T>): Promise<T> => {
    const thing = await starting;
    started.push(thing);
    return thing;
  };
  try {
    const stopping = (redis: RedisServer) => ({ port: redis.port, stop: () => redis.close() });
    const redis = await start(RedisServer.start().then(stopping));
    // The wider run's worker has a Redis of its own: on the same queue, each worker would take the other's payouts.
    const widerRedis = await start(RedisServer.start().then(stopping));
    const stub = await start(
      BenchChild.start('payouts-stub', './servers/payouts-stub.server.js', [`--latency-ms=${LATENCY}`]),
    );
    const startWorker = (name: string, redisPort: number, concurrency: number) =>
      start(
        BenchChild.start(name, './workers/payout-runs.worker.js', [
          `--stub-port=${stub.port}`,
          `--redis-port=${redisPort}`,
          `--concurrency=${concurrency}`,
        ]),
      );
    const worker = await startWorker('payout-runs', redis.port, CONCURRENCY);
    const widerWorker = await startWorker('payout-runs-wider', widerRedis.port, WIDER_CONCURRENCY);
    const timeoutMs = 120_000;
    const runOn = (child: BenchChild) => (mode: RunsRunArgs['mode'], total: number) =>
      child.call<RunsRunResult>('run', { mode, payouts: total } satisfies RunsRunArgs, timeoutMs);
    const run = runOn(worker);
    const runWider = runOn(widerWorker);
    for (const mode of MODES) await run(mode, Math.round(payouts / 4));
    await runWider('run', Math.round(payouts / 4));
    const rounds: Map<RunsRunArgs['mode'], RunsRunResult>[] = [];
    const wider: RunsRunResult[] = [];
    const enqueues: EnqueueRunResult[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const samples = new Map<RunsRunArgs['mode'], RunsRunResult>();
      for (const mode of MODES) samples.set(mode, await run(mode, payouts));
      rounds.push(samples);
      wider.push(await runWider('run', payouts));
      enqueues.push(await worker.call<EnqueueRunResult>('enqueue', { items: ENQUEUED }, timeoutMs));
    }
    report(settings, payouts, rounds, wider, enqueues);
  } finally {
    for (let thing = started.pop(); thing; thing = started.pop()) await thing.stop();
  }
}

function report(
  settings: BenchSettings,
  payouts: number,
  rounds: Map<RunsRunArgs['mode'], RunsRunResult>[],
  wider: RunsRunResult[],
  enqueues: EnqueueRunResult[],
): void {
  const ratio = spreadOf(
    rounds.map((round) => round.get('run')!.payoutsPerSecond / round.get('loop')!.payoutsPerSecond),
  );
  const overBare = spreadOf(
    rounds.map((round) => round.get('run')!.payoutsPerSecond / round.get('bullmq')!.payoutsPerSecond),
  );
  const again = spreadOf(
    rounds.map((round) => round.get('run')!.payoutsPerSecond / round.get('run-again')!.payoutsPerSecond),
  );
  const bareOverLoop = spreadOf(
    rounds.map((round) => round.get('bullmq')!.payoutsPerSecond / round.get('loop')!.payoutsPerSecond),
  );
  const perSecond = (mode: RunsRunArgs['mode']) =>
    formatCount(spreadOf(rounds.map((round) => round.get(mode)!.payoutsPerSecond)));
  const cpuPerPayout = (mode: RunsRunArgs['mode']) =>
    formatCount(spreadOf(rounds.map((round) => round.get(mode)!.cpuMicrosPerPayout)));
  const busy = (mode: RunsRunArgs['mode']) => formatShare(spreadOf(rounds.map((round) => round.get(mode)!.busyShare)));
  const widerOverRun = spreadOf(
    rounds.map((round, index) => wider[index]!.payoutsPerSecond / round.get('run')!.payoutsPerSecond),
  );
  const enqueueMs = spreadOf(enqueues.map((sample) => sample.enqueueMs));
  const addBulkMs = spreadOf(enqueues.map((sample) => sample.addBulkMs));
  const overFloor = spreadOf(enqueues.map((sample) => sample.enqueueMs / sample.addBulkMs));
  printTable(
    `Payout runs: ${settings.rounds} rounds of ${payouts} payouts, ${CONCURRENCY} at once, stub answering in ` +
      `${LATENCY} ms (median, lowest–highest round)`,
    ['Measure', 'Value', 'Target', 'Met'],
    [
      ['11 run (limit off), payouts/s', perSecond('run')],
      ['11 loop of createPayout, payouts/s', perSecond('loop')],
      ['11 BullMQ alone, createPayout as its processor, payouts/s', perSecond('bullmq')],
      ['run ÷ loop', formatSpread(ratio), `≥ ${TARGET.toFixed(2)}x`, ratio.median >= TARGET ? 'yes' : 'no'],
      ['BullMQ alone ÷ loop (the floor of a run)', formatSpread(bareOverLoop)],
      ['run ÷ BullMQ alone (what the package adds)', formatSpread(overBare)],
      [
        'run ÷ the same run again (A/A: noise, 1.00x ideally)',
        formatSpread(again),
        `within ${AA_TOLERANCE * 100} %`,
        Math.abs(again.median - 1) <= AA_TOLERANCE ? 'yes' : 'no',
      ],
      ["the worker process's CPU per payout, µs: run", cpuPerPayout('run')],
      ['the same: BullMQ alone', cpuPerPayout('bullmq')],
      ['the same: loop', cpuPerPayout('loop')],
      ['its CPU ÷ wall time (1.00: one core, no time to spare): run', busy('run')],
      ['the same: BullMQ alone', busy('bullmq')],
      ['the same: loop', busy('loop')],
      [
        `run with ${WIDER_CONCURRENCY} at once, payouts/s (a higher concurrency)`,
        formatCount(spreadOf(wider.map((sample) => sample.payoutsPerSecond))),
      ],
      [`run with ${WIDER_CONCURRENCY} at once ÷ run with ${CONCURRENCY}`, formatSpread(widerOverRun)],
      [
        `the worker process's CPU per payout at ${WIDER_CONCURRENCY}, µs`,
        formatCount(spreadOf(wider.map((sample) => sample.cpuMicrosPerPayout))),
      ],
      ['its CPU ÷ wall time', formatShare(spreadOf(wider.map((sample) => sample.busyShare)))],
      [
        `enqueue ${ENQUEUED} payouts, ms`,
        formatCount(enqueueMs),
        `≤ ${ENQUEUE_TARGET_MS} (quiet machine)`,
        enqueueMs.median <= ENQUEUE_TARGET_MS ? 'yes' : 'no',
      ],
      ['enqueue, payouts/s', Math.round(ENQUEUED / (enqueueMs.median / 1000))],
      [`the floor: BullMQ addBulk of the same ${ENQUEUED} jobs alone, ms`, formatCount(addBulkMs)],
      ['enqueue ÷ that floor (by time)', formatSpread(overFloor)],
    ],
  );
}

/** `0.93 (0.88–0.97)`: a median of shares with the lowest and highest round. */
function formatShare({ median, min, max }: Spread): string {
  return `${median.toFixed(2)} (${min.toFixed(2)}–${max.toFixed(2)})`;
}

/** `853 (801–870)`: a median of whole figures with the lowest and highest round. */
function formatCount({ median, min, max }: Spread): string {
  return `${Math.round(median)} (${Math.round(min)}–${Math.round(max)})`;
}
