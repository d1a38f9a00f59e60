import { Redis } from 'ioredis';
import { findRedisServer, RedisServer } from '../../test/support/redis-server.js';
import { BenchChild } from '../child-processes.js';
import { postJson } from '../http-post.js';
import { CONNECTIONS, type LoadResult, postNotifications } from '../load.js';
import {
  ACK_BODY,
  INVALID_NOTIFICATION_BODY,
  NOTIFICATION_PATH_WITH_TOKEN,
  notificationBody,
} from '../notification-sample.js';
import type { CpuSample, MemorySample } from '../protocol.js';
import { ADAPTERS, type AdapterName, type BenchSettings } from '../settings.js';
import { REDIS_CLIENTS } from '../servers/dedupe-store-args.js';
import { MIB, median } from '../stats.js';
import { formatRatio, printTable } from '../table.js';

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
  { kind: 'package', script: './servers/package.server.js', validates: true },
] as const;

const SERVERS: ServerSpec[] = [
  { key: 'raw', script: './servers/raw-http.server.js', args: [], validates: false },
  ...ADAPTERS.flatMap((adapter) =>
    NEST_SERVERS.map(({ kind, script, validates }) => ({
      key: `${adapter}-${kind}`,
      script,
      args: [`--adapter=${adapter}`],
      validates,
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
    { key: `${adapter}-package`, label: `${adapter} 4 nestjs-payouts`, server: `${adapter}-package`, body: uniqueBody },
    {
      key: `${adapter}-duplicate`,
      label: `${adapter} 4 nestjs-payouts, duplicates`,
      server: `${adapter}-package`,
      body: duplicateBody,
    },
    ...REDIS_CLIENTS.map((client) => ({
      key: `${adapter}-package-${client}`,
      label: `${adapter} 4 nestjs-payouts, Redis store (${client})`,
      server: `${adapter}-package-${client}`,
      body: uniqueBody,
      redis: true,
    })),
    {
      key: `${adapter}-package-queue`,
      label: `${adapter} 4 nestjs-payouts, queue mode (stores)`,
      server: `${adapter}-package-queue`,
      body: uniqueBody,
      redis: true,
      queue: true,
    },
  ]),
];

/** Package route ÷ plain Nest route: the targets of the benchmark. */
const PLAIN_ROUTE_TARGETS: Record<AdapterName, number> = { express: 0.95, fastify: 0.8 };
/** Route with the Redis store ÷ route with the in-memory store. */
const REDIS_STORE_TARGETS: Record<AdapterName, number> = { express: 0.85, fastify: 0.6 };

interface Sample extends LoadResult {
  readonly rssBytes: number;
  /**
   * The server's own CPU time per reply. On a machine shared with other work, throughput follows whatever else runs,
   * while the CPU a server spends on each request still compares two routes.
   */
  readonly cpuMicrosPerRequest: number;
}

/** Items 1-4: the notification route against what a user would write, interleaved round by round. */
export async function measureNotificationRoute(settings: BenchSettings): Promise<{ failures: number }> {
  const servers = new Map<string, BenchChild>();
  // The Redis store's scenarios need a redis-server of the bench's own; without one they are left out, and said so.
  const redis = findRedisServer() ? await RedisServer.start() : undefined;
  if (!redis) console.log('\nRedis store and queue mode scenarios left out: redis-server is not on the PATH.');
  const scenarios = SCENARIOS.filter((scenario) => redis || !scenario.redis);
  try {
    await Promise.all(
      SERVERS.filter((spec) => redis || !spec.redis).map(async (spec) => {
        const args = redis && spec.redis ? [...spec.args, `--redis-url=${redis.url}`] : spec.args;
        const server = await BenchChild.start(spec.key, spec.script, args);
        servers.set(spec.key, server);
        await probe(spec, server.port);
      }),
    );
    const flush = redis ? new Redis(redis.port, '127.0.0.1') : undefined;
    const run = async (scenario: Scenario, seconds: number): Promise<Sample> => {
      const server = servers.get(scenario.server)!;
      const before = await server.call<CpuSample>('cpu');
      const result = await postNotifications(server.port, seconds, scenario.body);
      const after = await server.call<CpuSample>('cpu');
      const { rssBytes } = await server.call<MemorySample>('memory');
      if (scenario.queue) await flush!.flushdb();
      return { ...result, rssBytes, cpuMicrosPerRequest: (after.cpuMicros - before.cpuMicros) / result.requests };
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
  const medianOf = (key: string, pick: (sample: Sample) => number) =>
    median(rounds.map((round) => pick(round.get(key)!)));
  const ratioOf = (key: string, baseline: string) =>
    median(rounds.map((round) => round.get(key)!.requestsPerSecond / round.get(baseline)!.requestsPerSecond));
  /** Requests the route serves per CPU second against the baseline's: the throughput ratio of CPU-bound servers. */
  const cpuRatioOf = (key: string, baseline: string) =>
    median(rounds.map((round) => round.get(baseline)!.cpuMicrosPerRequest / round.get(key)!.cpuMicrosPerRequest));
  let failures = 0;

  printTable(
    `Notification route: ${settings.rounds} rounds × ${settings.durationSeconds} s, ` +
      `${CONNECTIONS} connections (medians)`,
    ['Scenario', 'req/s', 'server CPU µs/req', 'p50 ms', 'p99 ms', 'avg ms', 'RSS MiB', 'failed'],
    scenarios.map((scenario) => {
      const failed = rounds.reduce((sum, round) => sum + round.get(scenario.key)!.failures, 0);
      failures += failed;
      return [
        scenario.label,
        medianOf(scenario.key, (sample) => sample.requestsPerSecond),
        medianOf(scenario.key, (sample) => sample.cpuMicrosPerRequest),
        medianOf(scenario.key, (sample) => sample.p50Ms),
        medianOf(scenario.key, (sample) => sample.p99Ms),
        medianOf(scenario.key, (sample) => sample.averageMs),
        medianOf(scenario.key, (sample) => sample.rssBytes / MIB),
        failed,
      ];
    }),
  );

  printTable(
    'Notification route ratios (median of per-round ratios)',
    ['Adapter', 'Ratio', 'Value', 'Target', 'Met'],
    ADAPTERS.flatMap((adapter) => {
      const target = PLAIN_ROUTE_TARGETS[adapter];
      const versusPlain = ratioOf(`${adapter}-package`, `${adapter}-plain`);
      const byCpu = cpuRatioOf(`${adapter}-package`, `${adapter}-plain`);
      const met = (ratio: number) => (ratio >= target ? 'yes' : 'no');
      return [
        [adapter, '4/3 package ÷ plain Nest', formatRatio(versusPlain), `≥ ${target.toFixed(2)}x`, met(versusPlain)],
        [adapter, '4/3 by server CPU per request', formatRatio(byCpu), `≥ ${target.toFixed(2)}x`, met(byCpu)],
        [adapter, '4/2 package ÷ ValidationPipe', formatRatio(ratioOf(`${adapter}-package`, `${adapter}-validation`))],
        [adapter, '4/1 package ÷ raw node:http', formatRatio(ratioOf(`${adapter}-package`, 'raw'))],
        [adapter, '4 duplicates ÷ 3 plain Nest', formatRatio(ratioOf(`${adapter}-duplicate`, `${adapter}-plain`))],
      ];
    }),
  );

  if (scenarios.some((scenario) => scenario.queue)) {
    printTable(
      'Queue mode ratios (median of per-round req/s ratios)',
      ['Adapter', 'Ratio', 'Value'],
      ADAPTERS.flatMap((adapter) => [
        [
          adapter,
          '4 queue mode ÷ 4 in-memory store',
          formatRatio(ratioOf(`${adapter}-package-queue`, `${adapter}-package`)),
        ],
        [adapter, '4 queue mode ÷ 3 plain Nest', formatRatio(ratioOf(`${adapter}-package-queue`, `${adapter}-plain`))],
      ]),
    );
  }

  if (scenarios.some((scenario) => scenario.redis)) {
    printTable(
      'Redis dedupe store ratios (median of per-round req/s ratios)',
      ['Adapter', 'Ratio', 'Value', 'Target', 'Met'],
      ADAPTERS.flatMap((adapter) =>
        REDIS_CLIENTS.map((client) => {
          const target = REDIS_STORE_TARGETS[adapter];
          const ratio = ratioOf(`${adapter}-package-${client}`, `${adapter}-package`);
          return [
            adapter,
            `4 Redis store (${client}) ÷ 4 in-memory store`,
            formatRatio(ratio),
            `≥ ${target.toFixed(2)}x`,
            ratio >= target ? 'yes' : 'no',
          ];
        }),
      ),
    );
  }
  return failures;
}
