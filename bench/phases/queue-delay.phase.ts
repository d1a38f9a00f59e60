import { findRedisServer, RedisServer } from '../../test/support/redis-server.js';
import { BenchChild } from '../child-processes.js';
import { postNotifications, STEADY_CONNECTIONS } from '../load.js';
import { notificationBody } from '../notification-sample.js';
import type { HandlerDelays } from '../protocol.js';
import { ADAPTERS, type BenchSettings } from '../settings.js';
import { median, percentile } from '../stats.js';
import { printTable } from '../table.js';

/** Far below what either mode serves (table of the route phase), so that it measures waiting, not saturation. */
const STEADY_RATE = 300;

const MODES = [
  { key: 'inline', label: 'inline (default)', args: [] },
  { key: 'queue', label: 'queue mode, worker in the same process', args: ['--queue=both'] },
] as const;

interface DelaySample {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly replyP50Ms: number;
  readonly replyP99Ms: number;
  readonly handled: number;
  readonly failures: number;
}

/** Numbers unseen by the other phases, so that no notification is a re-send. */
let sequence = 500_000_000;

/**
 * Item 9: from the route's receipt of a notification to the start of its handler, at a steady load, inline and in
 * queue mode (one app process that serves the route and runs the worker), interleaved round by round.
 */
export async function measureQueueDelay(settings: BenchSettings): Promise<void> {
  if (!findRedisServer()) {
    console.log('\nQueue delay left out: redis-server is not on the PATH.');
    return;
  }
  const redis = await RedisServer.start();
  const servers = new Map<string, BenchChild>();
  try {
    for (const adapter of ADAPTERS) {
      for (const mode of MODES) {
        const args = [`--adapter=${adapter}`, '--delays', ...mode.args, `--redis-url=${redis.url}`];
        servers.set(
          `${adapter}-${mode.key}`,
          await BenchChild.start(`${adapter}-${mode.key}`, './servers/package.server.js', args),
        );
      }
    }
    const run = async (key: string, seconds: number): Promise<DelaySample> => {
      const server = servers.get(key)!;
      const load = await postNotifications(server.port, seconds, () => notificationBody(sequence++), STEADY_RATE);
      // The last jobs of a run may still be on their way to the worker.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const delays = [...(await server.call<HandlerDelays>('delays')).delaysMs].sort((a, b) => a - b);
      return {
        p50Ms: percentile(delays, 0.5),
        p99Ms: percentile(delays, 0.99),
        maxMs: delays.at(-1) ?? Number.NaN,
        replyP50Ms: load.p50Ms,
        replyP99Ms: load.p99Ms,
        handled: delays.length,
        failures: load.failures,
      };
    };
    const keys = [...servers.keys()];
    for (const key of keys) await run(key, settings.warmupSeconds);
    const rounds: Map<string, DelaySample>[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const samples = new Map<string, DelaySample>();
      for (const key of keys) samples.set(key, await run(key, settings.durationSeconds));
      rounds.push(samples);
    }
    const medianOf = (key: string, pick: (sample: DelaySample) => number) =>
      median(rounds.map((round) => pick(round.get(key)!)));
    printTable(
      `Delivery to handler start: ${STEADY_RATE} notifications/s over ${STEADY_CONNECTIONS} connections, ` +
        `${settings.rounds} rounds × ${settings.durationSeconds} s (medians of per-round figures)`,
      [
        'Adapter',
        'Mode',
        'handler start p50 ms',
        'p99 ms',
        'max ms',
        'reply p50 ms',
        'reply p99 ms',
        'handled',
        'failed',
      ],
      ADAPTERS.flatMap((adapter) =>
        MODES.map((mode) => {
          const key = `${adapter}-${mode.key}`;
          return [
            adapter,
            mode.label,
            medianOf(key, (sample) => sample.p50Ms),
            medianOf(key, (sample) => sample.p99Ms),
            medianOf(key, (sample) => sample.maxMs),
            medianOf(key, (sample) => sample.replyP50Ms),
            medianOf(key, (sample) => sample.replyP99Ms),
            rounds.reduce((sum, round) => sum + round.get(key)!.handled, 0),
            rounds.reduce((sum, round) => sum + round.get(key)!.failures, 0),
          ];
        }),
      ),
    );
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    await redis.close();
  }
}
