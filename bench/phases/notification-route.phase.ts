import { Redis } from 'ioredis';
import { findRedisServer, RedisServer } from '../../test/support/redis-server.js';
import { baselineScript } from '../baseline.js';
import { BenchChild } from '../child-processes.js';
import { postJson } from '../http-post.js';
import { CONNECTIONS, type LoadResult, postNotifications } from '../load.js';
import {
  ACK_BODY,
  INVALID_NOTIFICATION_BODY,
  NOTIFICATION_PATH_WITH_TOKEN,
  notificationBody,
} from '../notification-sample.js';
import { processCpuMicros } from '../process-cpu.js';
import type { CpuSample, MemorySample } from '../protocol.js';
import { ADAPTERS, type BenchSettings } from '../settings.js';
import { REDIS_CLIENTS } from '../servers/dedupe-store-args.js';
import { MIB, median, spreadOf } from '../stats.js';
import { type Cell, formatSpread, printTable } from '../table.js';
import { HAND_WRITTEN_MEMORY_FASTIFY_TARGET, HAND_WRITTEN_TARGETS, PLAIN_ROUTE_TARGETS } from './route-targets.js';
import { argValues } from '../command-line.js';

interface ServerSpec {
  readonly key: string;
  readonly script: string;
  readonly args: string[];
  /** Whether the server must answer an invalid notification with 400. */
  readonly validates: boolean;
  /** Whether it needs the bench's Redis server (its URL is then appended to `args`). */
  readonly redis?: boolean;
}

interface Scenario {
  readonly key: string;
  readonly label: string;
  readonly server: string;
  readonly body: () => string;
  readonly redis?: boolean;
  /** Queue mode: the jobs it stored are removed after each run, so that Redis does not grow round after round. */
  readonly queue?: boolean;
}

/** Every unique notification carries the next number, so the package's dedupe store keeps growing. */
let sequence = 1;
const uniqueBody = () => notificationBody(sequence++);
const duplicate = notificationBody(0);
const duplicateBody = () => duplicate;

const NEST_SERVERS = [
  { kind: 'validation', script: './servers/validation-pipe.server.js', validates: true },
  { kind: 'plain', script: './servers/plain-nest.server.js', validates: false },
  { kind: 'floor', script: './servers/route-floor.server.js', validates: false },
  { kind: 'package', script: './servers/package.server.js', validates: true },
  // A/A: a second server of the same build, measured in the same rounds, shows the bench's own noise.
  { kind: 'package-twin', script: './servers/package.server.js', validates: true },
  { kind: 'hand-memory', script: './servers/hand-written.server.js', validates: true, args: ['--mode=memory'] },
] as const;

/** The anchors that need Redis: what a user would write by hand with the guarantees of the Redis store and queue mode. */
const HAND_WRITTEN_REDIS_MODES = ['redis', 'queue'] as const;

const SERVERS: ServerSpec[] = [
  { key: 'raw', script: './servers/raw-http.server.js', args: [], validates: false },
  ...ADAPTERS.flatMap((adapter) =>
    NEST_SERVERS.map((spec) => ({
      key: `${adapter}-${spec.kind}`,
      script: spec.script,
      args: [`--adapter=${adapter}`, ...('args' in spec ? spec.args : [])],
      validates: spec.validates,
    })),
  ),
  ...ADAPTERS.flatMap((adapter) =>
    HAND_WRITTEN_REDIS_MODES.map((mode) => ({
      key: `${adapter}-hand-${mode}`,
      script: './servers/hand-written.server.js',
      args: [`--adapter=${adapter}`, `--mode=${mode}`],
      validates: true,
      redis: true,
    })),
  ),
  ...ADAPTERS.flatMap((adapter) =>
    REDIS_CLIENTS.map((client) => ({
      key: `${adapter}-package-${client}`,
      script: './servers/package.server.js',
      args: [`--adapter=${adapter}`, `--store=${client}`],
      validates: true,
      redis: true,
    })),
  ),
  ...ADAPTERS.map((adapter) => ({
    key: `${adapter}-package-queue`,
    script: './servers/package.server.js',
    // A web instance: the route's cost is storing the job; workers run elsewhere.
    args: [`--adapter=${adapter}`, '--queue=web'],
    validates: true,
    redis: true,
  })),
];

/**
 * With `--baseline=<checkout>`, every server of the package also runs as built from that checkout, in the same rounds,
 * so that before and after are measured side by side.
 */
const BASELINE_SERVER = baselineScript('servers/package.server.js');
const PACKAGE_SERVERS = SERVERS.filter(
  (spec) => spec.script === './servers/package.server.js' && !spec.key.endsWith('-twin'),
);
if (BASELINE_SERVER !== undefined) {
  SERVERS.push(...PACKAGE_SERVERS.map((spec) => ({ ...spec, key: `${spec.key}-before`, script: BASELINE_SERVER })));
}

const SCENARIOS: Scenario[] = [
  { key: 'raw', label: '1 raw node:http', server: 'raw', body: uniqueBody },
  ...ADAPTERS.flatMap((adapter) => [
    {
      key: `${adapter}-validation`,
      label: `${adapter} 2 ValidationPipe + DTOs`,
      server: `${adapter}-validation`,
      body: uniqueBody,
    },
    { key: `${adapter}-plain`, label: `${adapter} 3 plain Nest route`, server: `${adapter}-plain`, body: uniqueBody },
    {
      key: `${adapter}-floor`,
      label: `${adapter} 3h every hook of the route, no work`,
      server: `${adapter}-floor`,
      body: uniqueBody,
    },
    { key: `${adapter}-package`, label: `${adapter} 4 nestjs-payouts`, server: `${adapter}-package`, body: uniqueBody },
    {
      key: `${adapter}-duplicate`,
      label: `${adapter} 4 nestjs-payouts, duplicates`,
      server: `${adapter}-package`,
      body: duplicateBody,
    },
    {
      key: `${adapter}-hand-memory`,
      label: `${adapter} 2m hand-written, in memory`,
      server: `${adapter}-hand-memory`,
      body: uniqueBody,
    },
    ...REDIS_CLIENTS.map((client) => ({
      key: `${adapter}-package-${client}`,
      label: `${adapter} 4 nestjs-payouts, Redis store (${client})`,
      server: `${adapter}-package-${client}`,
      body: uniqueBody,
      redis: true,
    })),
    {
      key: `${adapter}-hand-redis`,
      label: `${adapter} 2r hand-written, Redis lease (ioredis)`,
      server: `${adapter}-hand-redis`,
      body: uniqueBody,
      redis: true,
    },
    {
      key: `${adapter}-package-queue`,
      label: `${adapter} 4 nestjs-payouts, queue mode (stores)`,
      server: `${adapter}-package-queue`,
      body: uniqueBody,
      redis: true,
      queue: true,
    },
    {
      key: `${adapter}-hand-queue`,
      label: `${adapter} 2q hand-written, queue.add (stores)`,
      server: `${adapter}-hand-queue`,
      body: uniqueBody,
      redis: true,
      queue: true,
    },
    // Last of the adapter's runs, as far from the first server's as any pair compared: an honest measure of noise.
    {
      key: `${adapter}-package-aa`,
      label: `${adapter} 4 nestjs-payouts again (A/A, a second server)`,
      server: `${adapter}-package-twin`,
      body: uniqueBody,
    },
  ]),
];
if (BASELINE_SERVER !== undefined) {
  SCENARIOS.push(
    ...SCENARIOS.filter(
      (scenario) =>
        scenario.server.includes('-package') && !scenario.server.endsWith('-twin') && scenario.body === uniqueBody,
    ).map((scenario) => ({
      ...scenario,
      key: `${scenario.key}-before`,
      label: `${scenario.label} (before)`,
      server: `${scenario.server}-before`,
    })),
  );
}

/**
 * `--only=<key>` (repeatable) keeps only the scenarios named, for an A/B of a few routes in rounds short enough for a
 * shared machine: `raw`, then `<adapter>-` and `plain`, `floor`, `validation`, `package`, `package-aa`, `duplicate`,
 * `hand-memory`, `package-node-redis`, `package-ioredis`, `hand-redis`, `package-queue` or `hand-queue`, and with
 * `--baseline` the package's with `-before` appended (`fastify-package-before`).
 */
const ONLY = argValues('only');
const chosen = (key: string) => ONLY.length === 0 || ONLY.includes(key);

/** Servers booting at once before the rounds. */
const SERVERS_STARTING_AT_ONCE = 3;

interface Sample extends LoadResult {
  readonly rssBytes: number;
  /**
   * The server's own CPU time per reply. On a machine shared with other work, throughput follows whatever else runs,
   * while the CPU a server spends on each request still compares two routes.
   */
  readonly cpuMicrosPerRequest: number;
  /** Redis's own CPU time per reply, for the scenarios that use it (NaN for the others). */
  readonly redisCpuMicrosPerRequest: number;
}

/** Items 1 to 4aa: the notification route against what a user would write, interleaved round by round. */
export async function measureNotificationRoute(settings: BenchSettings): Promise<{ failures: number }> {
  const unknown = ONLY.find((key) => !SCENARIOS.some((scenario) => scenario.key === key));
  if (unknown !== undefined) throw new Error(`--only=${unknown}: no route scenario has that key`);
  const servers = new Map<string, BenchChild>();
  // The Redis store's scenarios need a redis-server of the bench's own; without one they are left out, and said so.
  const redis = findRedisServer() ? await RedisServer.start() : undefined;
  if (!redis) console.log('\nRedis store and queue mode scenarios left out: redis-server is not on the PATH.');
  const scenarios = SCENARIOS.filter((scenario) => (redis || !scenario.redis) && chosen(scenario.key));
  const needed = new Set(scenarios.map((scenario) => scenario.server));
  try {
    // A few at a time: some 30 Nest apps booting at once on two busy CPUs would outlast the ready timeout.
    const pending = SERVERS.filter((spec) => needed.has(spec.key));
    const startNext = async (): Promise<void> => {
      for (let spec = pending.shift(); spec !== undefined; spec = pending.shift()) {
        const args = redis && spec.redis ? [...spec.args, `--redis-url=${redis.url}`] : spec.args;
        const server = await BenchChild.start(spec.key, spec.script, args);
        servers.set(spec.key, server);
        await probe(spec, server.port);
      }
    };
    await Promise.all(Array.from({ length: SERVERS_STARTING_AT_ONCE }, startNext));
    const flush = redis ? new Redis(redis.port, '127.0.0.1') : undefined;
    /** The server's CPU time, read from outside it (`/proc`), or from the server itself where there is no /proc. */
    const cpuMicros = async (server: BenchChild) =>
      processCpuMicros(server.pid) ?? (await server.call<CpuSample>('cpu')).cpuMicros;
    const run = async (scenario: Scenario, seconds: number): Promise<Sample> => {
      const server = servers.get(scenario.server)!;
      const redisPid = scenario.redis ? redis?.pid : undefined;
      const redisBefore = redisPid === undefined ? undefined : processCpuMicros(redisPid);
      const before = await cpuMicros(server);
      const result = await postNotifications(server.port, seconds, scenario.body);
      const after = await cpuMicros(server);
      const redisAfter = redisPid === undefined ? undefined : processCpuMicros(redisPid);
      const { rssBytes } = await server.call<MemorySample>('memory');
      if (scenario.queue) await flush!.flushdb();
      return {
        ...result,
        rssBytes,
        cpuMicrosPerRequest: (after - before) / result.requests,
        redisCpuMicrosPerRequest:
          redisBefore === undefined || redisAfter === undefined
            ? Number.NaN
            : (redisAfter - redisBefore) / result.requests,
      };
    };

    for (const scenario of scenarios) await run(scenario, settings.warmupSeconds);
    const rounds: Map<string, Sample>[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const samples = new Map<string, Sample>();
      for (const scenario of scenarios) samples.set(scenario.key, await run(scenario, settings.durationSeconds));
      rounds.push(samples);
    }
    flush?.disconnect();
    return { failures: report(settings, scenarios, rounds) };
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    await redis?.close();
  }
}

/** Makes sure each server answers what the bench assumes before its figures count. */
async function probe(spec: ServerSpec, port: number): Promise<void> {
  const valid = await postJson(port, NOTIFICATION_PATH_WITH_TOKEN, uniqueBody());
  if (valid.status !== 200 || valid.body !== ACK_BODY || !valid.contentType?.startsWith('application/json')) {
    throw new Error(`${spec.key}: expected a 200 JSON ack, got ${valid.status} ${valid.contentType} ${valid.body}`);
  }
  if (spec.validates) {
    const invalid = await postJson(port, NOTIFICATION_PATH_WITH_TOKEN, INVALID_NOTIFICATION_BODY);
    if (invalid.status !== 400) {
      throw new Error(`${spec.key}: expected 400 for an invalid notification, got ${invalid.status}`);
    }
  }
}

function report(settings: BenchSettings, scenarios: readonly Scenario[], rounds: Map<string, Sample>[]): number {
  const present = new Set(scenarios.map((scenario) => scenario.key));
  const medianOf = (key: string, pick: (sample: Sample) => number) =>
    median(rounds.map((round) => pick(round.get(key)!)));
  let failures = 0;

  printTable(
    `Notification route: ${settings.rounds} rounds × ${settings.durationSeconds} s, ` +
      `${CONNECTIONS} connections (medians)`,
    ['Scenario', 'server CPU µs/req', 'Redis CPU µs/req', 'req/s', 'p50 ms', 'p99 ms', 'avg ms', 'RSS MiB', 'failed'],
    scenarios.map((scenario) => {
      const failed = rounds.reduce((sum, round) => sum + round.get(scenario.key)!.failures, 0);
      failures += failed;
      return [
        scenario.label,
        medianOf(scenario.key, (sample) => sample.cpuMicrosPerRequest),
        medianOf(scenario.key, (sample) => sample.redisCpuMicrosPerRequest),
        medianOf(scenario.key, (sample) => sample.requestsPerSecond),
        medianOf(scenario.key, (sample) => sample.p50Ms),
        medianOf(scenario.key, (sample) => sample.p99Ms),
        medianOf(scenario.key, (sample) => sample.averageMs),
        medianOf(scenario.key, (sample) => sample.rssBytes / MIB),
        failed,
      ];
    }),
  );

  /**
   * One ratio both ways, each the median of the per-round ratios with the lowest and highest round: by server CPU per
   * request (the baseline's CPU ÷ the scenario's, the throughput ratio of CPU-bound servers; it moves far less with
   * the machine's other load) and by req/s. A target is met by CPU when the median reaches it; by throughput, "yes"
   * when the median does and "within spread" when only the best round does. Undefined when either was not run
   * (`--only`).
   */
  const ratioRow = (
    adapter: string,
    label: string,
    key: string,
    baseline: string,
    target?: number,
  ): Cell[] | undefined => {
    if (!present.has(key) || !present.has(baseline)) return undefined;
    const byCpu = spreadOf(
      rounds.map((round) => round.get(baseline)!.cpuMicrosPerRequest / round.get(key)!.cpuMicrosPerRequest),
    );
    const byThroughput = spreadOf(
      rounds.map((round) => round.get(key)!.requestsPerSecond / round.get(baseline)!.requestsPerSecond),
    );
    if (target === undefined) return [adapter, label, formatSpread(byCpu), formatSpread(byThroughput)];
    const throughputMet = byThroughput.median >= target ? 'yes' : byThroughput.max >= target ? 'within spread' : 'no';
    return [
      adapter,
      label,
      formatSpread(byCpu),
      formatSpread(byThroughput),
      `≥ ${target.toFixed(2)}x`,
      byCpu.median >= target ? 'yes' : 'no',
      throughputMet,
    ];
  };
  const ratioTable = (title: string, rows: (Cell[] | undefined)[]) => {
    const run = rows.filter((row) => row !== undefined);
    if (run.length === 0) return;
    printTable(
      `${title} (median of per-round ratios, lowest–highest round)`,
      ['Adapter', 'Ratio', 'by server CPU/req', 'by req/s', 'Target', 'Met by CPU', 'Met by req/s'],
      run,
    );
  };
  const when = <Row>(keys: readonly string[], row: () => Row) => (keys.every((key) => present.has(key)) ? [row()] : []);

  ratioTable(
    'Notification route ratios',
    ADAPTERS.flatMap((adapter) => {
      const pkg = `${adapter}-package`;
      return [
        ratioRow(adapter, '4/3 package ÷ plain Nest', pkg, `${adapter}-plain`, PLAIN_ROUTE_TARGETS[adapter]),
        ratioRow(adapter, '4/2 package ÷ ValidationPipe', pkg, `${adapter}-validation`),
        ratioRow(adapter, '4/1 package ÷ raw node:http', pkg, 'raw'),
        ratioRow(adapter, '4 duplicates ÷ 3 plain Nest', `${adapter}-duplicate`, `${adapter}-plain`),
        ratioRow(adapter, '4 ÷ 3h every hook, no work', pkg, `${adapter}-floor`),
        ratioRow(adapter, '3h every hook, no work ÷ 3 plain Nest', `${adapter}-floor`, `${adapter}-plain`),
        ratioRow(adapter, '4 ÷ 4 again (A/A: noise, 1.00x ideally)', pkg, `${adapter}-package-aa`),
      ];
    }),
  );
  /** The Redis scenarios of each adapter, package and hand-written, with the in-memory routes they add a step to. */
  const steps = (adapter: string) => [
    ...REDIS_CLIENTS.map((client) => ({
      label: `Redis store (${client})`,
      pkg: `${adapter}-package-${client}`,
      hand: `${adapter}-hand-redis`,
    })),
    { label: 'queue mode', pkg: `${adapter}-package-queue`, hand: `${adapter}-hand-queue` },
  ];
  ratioTable(
    'Package ÷ hand-written with the same guarantees (above 1x the package costs less)',
    ADAPTERS.flatMap((adapter) => [
      ...when([`${adapter}-hand-memory`], () =>
        ratioRow(
          adapter,
          '4 ÷ 2m in memory',
          `${adapter}-package`,
          `${adapter}-hand-memory`,
          adapter === 'fastify' ? HAND_WRITTEN_MEMORY_FASTIFY_TARGET : HAND_WRITTEN_TARGETS[adapter],
        ),
      ),
      ...steps(adapter).flatMap(({ label, pkg, hand }) =>
        when([pkg, hand], () =>
          ratioRow(
            adapter,
            `4 ÷ 2${hand.endsWith('queue') ? 'q' : 'r'} ${label}`,
            pkg,
            hand,
            HAND_WRITTEN_TARGETS[adapter],
          ),
        ),
      ),
    ]),
  );

  /**
   * What the store or queue step adds to the server's CPU per request over the same route in memory (per round, then
   * the median and spread), the package's and the hand-written route's, and Redis's own CPU per notification. A ratio
   * to the in-memory route would worsen whenever the in-memory route got cheaper; these figures do not.
   */
  const micros = (values: number[]) => {
    const spread = spreadOf(values);
    return Number.isFinite(spread.median)
      ? `${spread.median.toFixed(1)} (${spread.min.toFixed(1)}–${spread.max.toFixed(1)})`
      : '-';
  };
  const added = (key: string, base: string) =>
    micros(rounds.map((round) => round.get(key)!.cpuMicrosPerRequest - round.get(base)!.cpuMicrosPerRequest));
  const redisCpu = (key: string) => micros(rounds.map((round) => round.get(key)!.redisCpuMicrosPerRequest));
  const stepRows = ADAPTERS.flatMap((adapter) =>
    steps(adapter).flatMap(({ label, pkg, hand }) =>
      when([pkg, hand, `${adapter}-hand-memory`], () => [
        adapter,
        label,
        added(pkg, `${adapter}-package`),
        added(hand, `${adapter}-hand-memory`),
        redisCpu(pkg),
        redisCpu(hand),
      ]),
    ),
  );
  if (stepRows.length > 0) {
    printTable(
      'What the store or queue step adds over the in-memory route: server CPU µs per request, and Redis’s own ' +
        '(median of per-round figures, lowest–highest round)',
      ['Adapter', 'Step', 'package adds', 'hand-written adds', 'Redis CPU, package', 'Redis CPU, hand-written'],
      stepRows,
    );
  }
  ratioTable(
    'This build ÷ the baseline (--baseline)',
    scenarios
      .filter((scenario) => present.has(`${scenario.key}-before`))
      .map((scenario) =>
        ratioRow(
          scenario.key.split('-')[0]!,
          `${scenario.label.replace(/^\w+ /, '')}: after ÷ before`,
          scenario.key,
          `${scenario.key}-before`,
        ),
      ),
  );
  return failures;
}
