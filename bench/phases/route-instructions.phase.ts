import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findExecutable } from '../../test/support/redis-server.js';
import { BenchChild } from '../child-processes.js';
import { postNotificationCount } from '../load.js';
import { notificationBody } from '../notification-sample.js';
import { ADAPTERS, type AdapterName, type BenchSettings } from '../settings.js';
import { mean } from '../stats.js';
import { type Cell, formatRatio, printTable } from '../table.js';
import { HAND_WRITTEN_MEMORY_FASTIFY_TARGET, HAND_WRITTEN_TARGETS, PLAIN_ROUTE_TARGETS } from './route-targets.js';
import { argValues } from '../command-line.js';

/**
 * Item 13: the in-memory routes of items 1 to 4aa (and on Fastify route 4 again with its dedupe store full, and 3hk,
 * the floor that remembers each key, growing and full), each counted in instructions its server process runs per
 * request (valgrind's callgrind, every thread of the process: the route, the garbage collector and the compiler).
 * Unlike CPU time, that count does not depend on what else the machine runs, so two runs on a shared machine agree, and
 * so do two servers of the same build (the A/A row). It is not time: a cache miss or a system call costs more than its
 * instructions say, which is why the route phase's CPU per request stays beside it.
 */

interface Scenario {
  readonly key: string;
  readonly label: string;
  readonly script: string;
  readonly args: readonly string[];
  /**
   * The package's dedupe store is filled to its bound (`instructionStoreEntries` keys) before the warm-up, so that
   * the windows see what a server that has run for a while does: a full store forgets a key for each new one.
   */
  readonly fillsStore?: boolean;
}

const SCENARIOS: readonly Scenario[] = [
  { key: 'raw', label: '1 raw node:http', script: './servers/raw-http.server.js', args: [] },
  ...ADAPTERS.flatMap((adapter) => {
    const nest = (kind: string, label: string, script: string, args: string[] = []): Scenario => ({
      key: `${adapter}-${kind}`,
      label: `${adapter} ${label}`,
      script,
      args: [`--adapter=${adapter}`, ...args],
    });
    return [
      nest('plain', '3 plain Nest route', './servers/plain-nest.server.js'),
      nest('floor', '3h every hook of the route, no work', './servers/route-floor.server.js'),
      nest('package', '4 nestjs-payouts', './servers/package.server.js'),
      nest('package-aa', '4 nestjs-payouts again (A/A, a second server)', './servers/package.server.js'),
      nest('hand-memory', '2m hand-written, in memory', './servers/hand-written.server.js', ['--mode=memory']),
    ];
  }),
  // Fastify's only: an Express server under valgrind would take most of an hour to fill the store, and Express's
  // windows see no major collection, which is what 3hk measures.
  {
    key: 'fastify-package-full',
    label: 'fastify 4 nestjs-payouts, its dedupe store full',
    script: './servers/package.server.js',
    args: ['--adapter=fastify'],
    fillsStore: true,
  },
  {
    key: 'fastify-floor-keys',
    label: 'fastify 3hk every hook, remembering each key, no other work',
    script: './servers/route-floor.server.js',
    args: ['--adapter=fastify', '--remember-keys'],
  },
  {
    key: 'fastify-floor-keys-full',
    label: 'fastify 3hk every hook, remembering each key, its keys full',
    script: './servers/route-floor.server.js',
    args: ['--adapter=fastify', '--remember-keys'],
    fillsStore: true,
  },
];

/** Connections of the load: a server under valgrind is always behind, so each turn of its loop has work waiting. */
const CONNECTIONS = 8;
/** A Nest app boots in about a minute under valgrind on a quiet machine. */
const READY_TIMEOUT_MS = 10 * 60_000;
/** Unique notifications from here on, so that no two servers' dedupe stores see the same keys. */
let sequence = 1_000_000_000;
const uniqueBody = () => notificationBody(sequence++);

const ONLY = argValues('only');

interface Counted {
  /** Instructions per request in each window, in the order measured. */
  readonly perRequest: number[];
  /** Replies other than the ack, warm-up included. */
  readonly failures: number;
}

export async function measureRouteInstructions(settings: BenchSettings): Promise<{ failures: number }> {
  const valgrind = findExecutable('valgrind');
  const control = findExecutable('callgrind_control');
  if (valgrind === undefined || control === undefined) {
    console.log(
      '\nInstructions per request left out: valgrind is not on the PATH (on Debian: apt-get install valgrind).',
    );
    return { failures: 0 };
  }
  const scenarios = SCENARIOS.filter((scenario) => ONLY.length === 0 || ONLY.includes(scenario.key));
  if (scenarios.length === 0) {
    console.log('\nInstructions per request left out: no scenario of that phase is named by --only.');
    return { failures: 0 };
  }
  const {
    instructionWarmupRequests: warmup,
    instructionWindowRequests: window,
    instructionStoreEntries: storeEntries,
    rounds,
  } = settings;
  const directory = mkdtempSync(join(tmpdir(), 'payouts-bench-callgrind-'));
  const counted = new Map<string, Counted>();
  try {
    // The counts do not depend on the load, so the servers run side by side, one per CPU.
    const pending = [...scenarios];
    const next = async (): Promise<void> => {
      for (let scenario = pending.shift(); scenario !== undefined; scenario = pending.shift()) {
        counted.set(
          scenario.key,
          await count(scenario, { valgrind, control, directory, warmup, window, windows: rounds, storeEntries }),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(availableParallelism(), scenarios.length) }, next));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return { failures: report(scenarios, counted, { warmup, window, rounds, storeEntries }) };
}

interface CountOptions {
  readonly valgrind: string;
  readonly control: string;
  readonly directory: string;
  readonly warmup: number;
  readonly window: number;
  readonly windows: number;
  readonly storeEntries: number;
}

/** Starts the scenario's server under callgrind, warms it up, then counts each window from zero. */
async function count(scenario: Scenario, options: CountOptions): Promise<Counted> {
  const output = join(options.directory, `${scenario.key}.callgrind`);
  const args = [...scenario.args, ...(scenario.fillsStore ? [`--max-entries=${options.storeEntries}`] : [])];
  const server = await BenchChild.start(scenario.key, scenario.script, args, {
    execPath: options.valgrind,
    execArgv: [
      '--tool=callgrind',
      `--callgrind-out-file=${output}`,
      `--log-file=${join(options.directory, `${scenario.key}.log`)}`,
      process.execPath,
      // When V8 collects garbage then depends on what the route allocates alone: by default it also follows timings,
      // which valgrind stretches, and two servers of the same build then collect in different windows.
      '--predictable-gc-schedule',
    ],
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  try {
    // Until the compiler has settled on its code for the route, each window costs less than the one before.
    const fill = scenario.fillsStore ? options.storeEntries : 0;
    let failures = await postNotificationCount(server.port, fill + options.warmup, uniqueBody, CONNECTIONS);
    const perRequest: number[] = [];
    // The first window after the warm-up counts high however long the warm-up (about twice the next ones in the raw
    // node:http server, a tenth more in Express's plain route): it is run, and left out.
    for (let dump = 1; dump <= options.windows + 1; dump++) {
      await callgrindControl(options.control, '--zero', server.pid);
      failures += await postNotificationCount(server.port, options.window, uniqueBody, CONNECTIONS);
      await callgrindControl(options.control, '--dump', server.pid);
      // Callgrind numbers its dumps from 1, in the file named by --callgrind-out-file.
      if (dump > 1) perRequest.push(instructionsIn(`${output}.${dump}`) / options.window);
    }
    return { perRequest, failures };
  } finally {
    await server.stop();
  }
}

const run = promisify(execFile);

/** `callgrind_control` returns once the process has done what it was asked (through valgrind's gdbserver). */
async function callgrindControl(control: string, action: string, pid: number): Promise<void> {
  await run(control, [action, String(pid)], { timeout: 60_000 });
}

/** The total instructions of one dump: its `summary:` line. */
function instructionsIn(file: string): number {
  if (!existsSync(file)) throw new Error(`callgrind wrote no dump ${file}`);
  const summary = /^summary: (\d+)$/m.exec(readFileSync(file, 'utf8'));
  if (summary === null) throw new Error(`callgrind's dump ${file} has no summary line`);
  return Number(summary[1]);
}

const AA_TOLERANCE = 0.05;

function report(
  scenarios: readonly Scenario[],
  counted: ReadonlyMap<string, Counted>,
  { warmup, window, rounds, storeEntries }: { warmup: number; window: number; rounds: number; storeEntries: number },
): number {
  let failures = 0;
  const thousands = (value: number) => value / 1000;
  // The mean, not the median: a window with a major garbage collection costs up to half as much again, and that cost
  // is the route's too (the more it keeps or allocates, the more often it comes).
  printTable(
    `Server instructions per request (callgrind): ${warmup + window} requests to warm up, then ${rounds} windows of ` +
      `${window} (thousands; the mean of the windows, then the lowest and highest window)`,
    ['Scenario', 'instructions/req (k)', 'lowest', 'highest', 'not acknowledged'],
    scenarios.map((scenario) => {
      const { perRequest, failures: failed } = counted.get(scenario.key)!;
      failures += failed;
      return [
        scenario.fillsStore
          ? `${scenario.label} (${storeEntries.toLocaleString('en-US')} keys, sent before the warm-up)`
          : scenario.label,
        thousands(mean(perRequest)),
        thousands(Math.min(...perRequest)),
        thousands(Math.max(...perRequest)),
        failed,
      ];
    }),
  );

  /**
   * Baseline's instructions ÷ the scenario's (above 1x the scenario runs fewer): over all windows, then window by
   * window the lowest and highest.
   */
  const ratio = (key: string, baseline: string) => {
    const of = counted.get(key)?.perRequest;
    const base = counted.get(baseline)?.perRequest;
    if (of === undefined || base === undefined) return undefined;
    const byWindow = of.map((value, index) => base[index]! / value);
    return { overall: mean(base) / mean(of), min: Math.min(...byWindow), max: Math.max(...byWindow) };
  };
  const format = ({ overall, min, max }: { overall: number; min: number; max: number }) =>
    `${formatRatio(overall)} (${formatRatio(min)}–${formatRatio(max)})`;
  const row = (adapter: string, label: string, key: string, baseline: string, target?: number): Cell[] => {
    const spread = ratio(key, baseline);
    if (spread === undefined) return [];
    return [
      adapter,
      label,
      format(spread),
      target === undefined ? '' : `≥ ${target.toFixed(2)}x`,
      target === undefined ? '' : spread.overall >= target ? 'yes' : 'no',
    ];
  };
  const aaRow = (adapter: AdapterName): Cell[] => {
    const spread = ratio(`${adapter}-package`, `${adapter}-package-aa`);
    if (spread === undefined) return [];
    const within = Math.abs(spread.overall - 1) <= AA_TOLERANCE;
    return [adapter, '4 ÷ 4 again (A/A)', format(spread), `within ${AA_TOLERANCE * 100} %`, within ? 'yes' : 'no'];
  };
  const rows = ADAPTERS.flatMap((adapter) => {
    const pkg = `${adapter}-package`;
    return [
      row(adapter, '4/3 package ÷ plain Nest', pkg, `${adapter}-plain`, PLAIN_ROUTE_TARGETS[adapter]),
      row(adapter, '4 ÷ 3h every hook, no work', pkg, `${adapter}-floor`),
      row(adapter, '3h every hook, no work ÷ 3 plain Nest', `${adapter}-floor`, `${adapter}-plain`),
      row(
        adapter,
        '4 ÷ 2m hand-written, in memory',
        pkg,
        `${adapter}-hand-memory`,
        adapter === 'fastify' ? HAND_WRITTEN_MEMORY_FASTIFY_TARGET : HAND_WRITTEN_TARGETS[adapter],
      ),
      row(adapter, '4/1 package ÷ raw node:http', pkg, 'raw'),
      row(adapter, '4 store full ÷ 3 plain Nest', `${pkg}-full`, `${adapter}-plain`, PLAIN_ROUTE_TARGETS[adapter]),
      // What keeping the keys costs any route that refuses a re-send in memory, and the package's work above that.
      row(adapter, '3hk remembering each key ÷ 3 plain Nest', `${adapter}-floor-keys`, `${adapter}-plain`),
      row(adapter, '4 ÷ 3hk remembering each key', pkg, `${adapter}-floor-keys`),
      row(adapter, '3hk keys full ÷ 3 plain Nest', `${adapter}-floor-keys-full`, `${adapter}-plain`),
      row(adapter, '4 store full ÷ 3hk keys full', `${pkg}-full`, `${adapter}-floor-keys-full`),
      aaRow(adapter),
    ];
  }).filter((cells) => cells.length > 0);
  if (rows.length > 0) {
    printTable(
      'Ratios by server instructions per request (over all windows, then the lowest–highest window by window)',
      ['Adapter', 'Ratio', 'by instructions/req', 'Target', 'Met'],
      rows,
    );
  }
  return failures;
}
