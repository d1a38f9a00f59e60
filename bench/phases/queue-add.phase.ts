import { findRedisServer, RedisServer } from '../../test/support/redis-server.js';
import { BenchChild } from '../child-processes.js';
import type { BenchSettings } from '../settings.js';
import { spreadOf } from '../stats.js';
import { printTable } from '../table.js';
import type { QueueAddArgs, QueueAddResult } from '../workers/queue-add.worker.js';

const ADDS_PER_RUN = 40_000;
const IN_FLIGHT = [1, 50] as const;

/**
 * Item 4a: BullMQ's own `Queue.add` per job, in a process that does nothing else, one add at a time and 50 awaiting
 * their reply, interleaved round by round. Each run adds a fixed number of jobs, removed after it.
 */
export async function measureQueueAdd(settings: BenchSettings): Promise<void> {
  if (!findRedisServer()) {
    console.log('\nQueue.add left out: redis-server is not on the PATH.');
    return;
  }
  const redis = await RedisServer.start();
  try {
    const worker = await BenchChild.start('queue-add', './workers/queue-add.worker.js', [`--redis-url=${redis.url}`]);
    try {
      const run = async (inFlight: number, adds: number) => {
        const args: QueueAddArgs = { adds, inFlight };
        const result = await worker.call<QueueAddResult>('run', args, 120_000);
        await worker.call('clear', undefined, 120_000);
        return result;
      };
      for (const inFlight of IN_FLIGHT) await run(inFlight, ADDS_PER_RUN / 4);
      const results = new Map<number, QueueAddResult[]>(IN_FLIGHT.map((inFlight) => [inFlight, []]));
      for (let round = 0; round < settings.rounds; round++) {
        for (const inFlight of IN_FLIGHT) results.get(inFlight)!.push(await run(inFlight, ADDS_PER_RUN));
      }
      const cell = (values: number[]) => {
        const { median, min, max } = spreadOf(values);
        return `${median.toFixed(1)} (${min.toFixed(1)}–${max.toFixed(1)})`;
      };
      printTable(
        `BullMQ Queue.add alone: ${settings.rounds} rounds of ${ADDS_PER_RUN} adds (median, lowest–highest round)`,
        ['Adds in flight', 'CPU µs/add', 'adds/s'],
        IN_FLIGHT.map((inFlight) => {
          const runs = results.get(inFlight)!;
          return [
            inFlight,
            cell(runs.map((result) => result.cpuMicrosPerAdd)),
            Math.round(spreadOf(runs.map((result) => result.addsPerSecond)).median),
          ];
        }),
      );
    } finally {
      await worker.stop();
    }
  } finally {
    await redis.close();
  }
}
