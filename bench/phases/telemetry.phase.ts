import { baselineScript } from '../baseline.js';
import { BenchChild } from '../child-processes.js';
import { postJson } from '../http-post.js';
import { type LoadResult, postNotifications } from '../load.js';
import { ACK_BODY, NOTIFICATION_PATH_WITH_TOKEN, notificationBody } from '../notification-sample.js';
import { processCpuMicros } from '../process-cpu.js';
import type { TelemetryMode } from '../servers/telemetry-args.js';
import { ADAPTERS, type BenchSettings } from '../settings.js';
import { median } from '../stats.js';
import { formatRatio, printTable } from '../table.js';
import type {
  InstrumentationCost,
  InstrumentationCostArgs,
  InstrumentationVariant,
} from '../workers/instrumentation-cost.worker.js';
import type { ClientRunArgs, ClientRunResult } from '../workers/payouts-client.worker.js';

/**
 * What the route and `createPayout()` cost with telemetry off, with OpenTelemetry on but no SDK (the API's no-op
 * tracer and meter: the package's own cost), and with a listener on every event. With `--baseline=<checkout>` (an
 * earlier commit of the package, built with its bench: `npm run build && npx tsc -p bench/tsconfig.json`), that
 * checkout's route and client run in the same rounds, so "off" is compared with the package before telemetry.
 */
type Variant = TelemetryMode | 'baseline';

const VARIANTS: readonly TelemetryMode[] = ['off', 'opentelemetry', 'events'];
const LABELS: Record<Variant, string> = {
  baseline: 'baseline (before telemetry)',
  off: 'telemetry off',
  opentelemetry: 'OpenTelemetry, no SDK (no-op)',
  events: 'a listener on every event',
};
const CONCURRENCY = 32;

/** A run of the route, with the CPU time its server spent per request, read from outside the server process. */
interface RouteSample extends LoadResult {
  readonly cpuMicrosPerRequest: number;
}

let sequence = 1;
const uniqueBody = () => notificationBody(sequence++);

export async function measureTelemetry(settings: BenchSettings): Promise<{ failures: number }> {
  const baselineServer = baselineScript('servers/package.server.js');
  const variants: Variant[] = baselineServer ? ['baseline', ...VARIANTS] : [...VARIANTS];
  const failures = await measureRoute(settings, variants, baselineServer);
  await measureClient(settings, variants, baselineScript('workers/payouts-client.worker.js'));
  await measureInstrumentation(settings);
  return { failures };
}

async function measureRoute(settings: BenchSettings, variants: Variant[], baselineServer?: string): Promise<number> {
  const servers = new Map<string, BenchChild>();
  let failures = 0;
  try {
    for (const adapter of ADAPTERS) {
      for (const variant of variants) {
        const script = variant === 'baseline' ? baselineServer! : './servers/package.server.js';
        const args =
          variant === 'baseline' ? [`--adapter=${adapter}`] : [`--adapter=${adapter}`, `--telemetry=${variant}`];
        const server = await BenchChild.start(`${adapter}-${variant}`, script, args);
        servers.set(`${adapter}-${variant}`, server);
        const probe = await postJson(server.port, NOTIFICATION_PATH_WITH_TOKEN, uniqueBody());
        if (probe.status !== 200 || probe.body !== ACK_BODY) {
          throw new Error(`${adapter}-${variant}: expected the 200 ack, got ${probe.status} ${probe.body}`);
        }
      }
    }
    const run = async (key: string, seconds: number): Promise<RouteSample> => {
      const server = servers.get(key)!;
      const cpuBefore = processCpuMicros(server.pid) ?? Number.NaN;
      const result = await postNotifications(server.port, seconds, uniqueBody);
      const cpu = (processCpuMicros(server.pid) ?? Number.NaN) - cpuBefore;
      return { ...result, cpuMicrosPerRequest: cpu / result.requests };
    };
    const keys = [...servers.keys()];
    for (const key of keys) await run(key, settings.warmupSeconds);
    const rounds: Map<string, RouteSample>[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const samples = new Map<string, RouteSample>();
      for (const key of keys) samples.set(key, await run(key, settings.durationSeconds));
      rounds.push(samples);
    }
    failures = rounds.reduce((sum, round) => sum + [...round.values()].reduce((n, r) => n + r.failures, 0), 0);
    reportRoute(settings, variants, rounds);
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
  }
  return failures;
}

function reportRoute(settings: BenchSettings, variants: Variant[], rounds: Map<string, RouteSample>[]): void {
  const medianOf = (key: string, pick: (result: RouteSample) => number) =>
    median(rounds.map((round) => pick(round.get(key)!)));
  printTable(
    `Notification route with telemetry: ${settings.rounds} rounds × ${settings.durationSeconds} s, 50 connections (medians)`,
    ['Scenario', 'req/s', 'p50 ms', 'p99 ms', 'avg ms', 'server CPU µs/req', 'failed'],
    ADAPTERS.flatMap((adapter) =>
      variants.map((variant) => {
        const key = `${adapter}-${variant}`;
        return [
          `${adapter} 4 nestjs-payouts, ${LABELS[variant]}`,
          medianOf(key, (result) => result.requestsPerSecond),
          medianOf(key, (result) => result.p50Ms),
          medianOf(key, (result) => result.p99Ms),
          medianOf(key, (result) => result.averageMs),
          medianOf(key, (result) => result.cpuMicrosPerRequest),
          rounds.reduce((sum, round) => sum + round.get(key)!.failures, 0),
        ];
      }),
    ),
  );
  // Throughput swings with whatever else runs on the machine; the server's CPU time per request is the steadier figure.
  const comparisons: [Variant, Variant, string][] = variants
    .filter((variant) => variant !== 'off')
    .map((variant) =>
      variant === 'baseline'
        ? ['off', 'baseline', `${LABELS.off} against ${LABELS.baseline}`]
        : [variant, 'off', `${LABELS[variant]} against ${LABELS.off}`],
    );
  const perRound = (adapter: string, [measured, base]: [Variant, Variant, string], pick: Comparison) =>
    median(rounds.map((round) => pick(round.get(`${adapter}-${measured}`)!, round.get(`${adapter}-${base}`)!)));
  printTable(
    'Notification route: what telemetry adds (median of per-round figures)',
    ['Adapter', 'Comparison', 'req/s ratio', 'server CPU µs added per request'],
    ADAPTERS.flatMap((adapter) =>
      comparisons.map((comparison) => [
        adapter,
        comparison[2],
        formatRatio(perRound(adapter, comparison, (a, b) => a.requestsPerSecond / b.requestsPerSecond)),
        perRound(adapter, comparison, (a, b) => a.cpuMicrosPerRequest - b.cpuMicrosPerRequest),
      ]),
    ),
  );
}

type Comparison = (measured: RouteSample, base: RouteSample) => number;

async function measureClient(settings: BenchSettings, variants: Variant[], baselineWorker?: string): Promise<void> {
  const stub = await BenchChild.start('payouts-stub', './servers/payouts-stub.server.js');
  const workers = new Map<Variant, BenchChild>();
  try {
    for (const variant of variants) {
      const script = variant === 'baseline' ? baselineWorker! : './workers/payouts-client.worker.js';
      const args = [`--stub-port=${stub.port}`, ...(variant === 'baseline' ? [] : [`--telemetry=${variant}`])];
      workers.set(variant, await BenchChild.start(`payouts-client-${variant}`, script, args));
    }
    const run = (variant: Variant, seconds: number) => {
      const args: ClientRunArgs = { client: 'createPayout', durationMs: seconds * 1000, concurrency: CONCURRENCY };
      return workers.get(variant)!.call<ClientRunResult>('run', args, args.durationMs + 30_000);
    };
    for (const variant of variants) await run(variant, settings.warmupSeconds);
    const rounds: Map<Variant, ClientRunResult>[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const samples = new Map<Variant, ClientRunResult>();
      for (const variant of variants) samples.set(variant, await run(variant, settings.durationSeconds));
      rounds.push(samples);
    }
    const medianOf = (variant: Variant, pick: (result: ClientRunResult) => number) =>
      median(rounds.map((round) => pick(round.get(variant)!)));
    const againstOff = (variant: Variant, pick: (result: ClientRunResult) => number) =>
      median(rounds.map((round) => pick(round.get(variant)!) - pick(round.get('off')!)));
    printTable(
      `createPayout with telemetry: ${settings.rounds} rounds × ${settings.durationSeconds} s, ` +
        `${CONCURRENCY} concurrent calls (medians; "added" is against off, per round)`,
      ['Client', 'calls/s', 'mean ms', 'client CPU µs/call', 'added CPU µs/call'],
      variants.map((variant) => [
        `createPayout, ${LABELS[variant]}`,
        medianOf(variant, (result) => result.callsPerSecond),
        medianOf(variant, (result) => result.meanMs),
        medianOf(variant, (result) => result.cpuMicrosPerCall),
        variant === 'off' ? '' : Math.round(againstOff(variant, (result) => result.cpuMicrosPerCall)),
      ]),
    );
  } finally {
    await Promise.all([...workers.values()].map((worker) => worker.stop()));
    await stub.stop();
  }
}

const INSTRUMENTATION_VARIANTS: readonly InstrumentationVariant[] = ['noop', 'opentelemetry'];
/** Loop iterations per round and second of the settings' duration: about a second per run. */
const ITERATIONS_PER_SECOND = 200_000;

/** The instrumentation's own time per notification and per payout call, in a loop without HTTP. */
async function measureInstrumentation(settings: BenchSettings): Promise<void> {
  const worker = await BenchChild.start('instrumentation-cost', './workers/instrumentation-cost.worker.js');
  try {
    const iterations = ITERATIONS_PER_SECOND * Math.max(1, Math.round(settings.durationSeconds / 8));
    const run = (variant: InstrumentationVariant) => {
      const args: InstrumentationCostArgs = { variant, iterations };
      return worker.call<InstrumentationCost>('run', args, 120_000);
    };
    for (const variant of INSTRUMENTATION_VARIANTS) await run(variant);
    const rounds: Map<InstrumentationVariant, InstrumentationCost>[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const samples = new Map<InstrumentationVariant, InstrumentationCost>();
      for (const variant of INSTRUMENTATION_VARIANTS) samples.set(variant, await run(variant));
      rounds.push(samples);
    }
    const medianOf = (variant: InstrumentationVariant, pick: (cost: InstrumentationCost) => number) =>
      median(rounds.map((round) => pick(round.get(variant)!)));
    printTable(
      `The instrumentation alone: ${settings.rounds} rounds of ${iterations} iterations (medians)`,
      ['Instrumentation', 'µs per notification (one handler)', 'µs per createPayout (503, then 201)'],
      INSTRUMENTATION_VARIANTS.map((variant) => [
        variant === 'noop' ? 'telemetry off (no-op)' : LABELS.opentelemetry,
        medianOf(variant, (cost) => cost.notificationMicros),
        medianOf(variant, (cost) => cost.payoutCallMicros),
      ]),
    );
  } finally {
    await worker.stop();
  }
}
