import { createRequire } from 'node:module';
import { availableParallelism, loadavg } from 'node:os';
import { stopAllChildren } from './child-processes.js';
import { measureColdStart } from './phases/cold-start.phase.js';
import { measureDedupeMemory } from './phases/dedupe-memory.phase.js';
import { measureNotificationRoute } from './phases/notification-route.phase.js';
import { measurePayoutLedger } from './phases/payout-ledger.phase.js';
import { measurePayoutRuns } from './phases/payout-runs.phase.js';
import { measurePayoutsClient } from './phases/payouts-client.phase.js';
import { measureQueueAdd } from './phases/queue-add.phase.js';
import { measureQueueDelay } from './phases/queue-delay.phase.js';
import { measureRedisMemory } from './phases/redis-memory.phase.js';
import { measureRouteInstructions } from './phases/route-instructions.phase.js';
import { measureTelemetry } from './phases/telemetry.phase.js';
import { FULL_SETTINGS, QUICK_SETTINGS } from './settings.js';
import { argValue, argValues } from './command-line.js';

const quick = process.argv.includes('--quick');
/** `--rounds=N` and `--seconds=S` shorten (or lengthen) the rounds on a machine that cannot be had for long. */
const numberOption = (name: string) => {
  const value = argValue(name);
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value)) {
    console.error(`bench: --${name} must be a whole number of at least 1, got ${value}`);
    process.exit(2);
  }
  return Number(value);
};
const rounds = numberOption('rounds');
const seconds = numberOption('seconds');
const SETTINGS = {
  ...(quick ? QUICK_SETTINGS : FULL_SETTINGS),
  ...(rounds !== undefined && { rounds }),
  ...(seconds !== undefined && { durationSeconds: seconds }),
};
const PHASES = [
  'route',
  'route-instructions',
  'queue-add',
  'queue-delay',
  'payouts',
  'payout-runs',
  'payout-ledger',
  'telemetry',
  'dedupe',
  'redis-memory',
  'cold-start',
] as const;
type Phase = (typeof PHASES)[number];
/** `--phase=route` (repeatable) runs only the phases named; every phase runs by default. */
const chosen = argValues('phase');
const unknownPhase = chosen.find((name) => !PHASES.includes(name as Phase));
if (unknownPhase !== undefined) {
  console.error(`bench: unknown phase ${unknownPhase}; expected one of ${PHASES.join(', ')}`);
  process.exit(2);
}
const runs = (phase: Phase) => chosen.length === 0 || chosen.includes(phase);

let stopping = false;
async function shutdown(code: number, reason?: unknown): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (reason !== undefined) console.error(reason);
    await stopAllChildren();
  }
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(130));
process.on('SIGTERM', () => void shutdown(143));
setTimeout(
  () => void shutdown(1, `bench: stopped after its ${SETTINGS.timeLimitSeconds} s time limit`),
  SETTINGS.timeLimitSeconds * 1000,
).unref();

const require = createRequire(import.meta.url);
/** Version of `name` as installed for `dependent` (Express and Fastify come with the Nest platform packages). */
const versionOf = (name: string, dependent = name) =>
  (createRequire(require.resolve(`${dependent}/package.json`))(`${name}/package.json`) as { version: string }).version;
console.log(
  `## nestjs-payouts bench (${quick ? 'quick' : 'full'}, ${SETTINGS.rounds} rounds of ${SETTINGS.durationSeconds} s` +
    `${chosen.length > 0 ? `, ${chosen.join(' and ')} only` : ''})\n`,
);
console.log(
  `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, Nest ${versionOf('@nestjs/core')} ` +
    `(Express ${versionOf('express', '@nestjs/platform-express')}, ` +
    `Fastify ${versionOf('fastify', '@nestjs/platform-fastify')}), ` +
    `${availableParallelism()} CPUs, load average ${loadavg()[0]!.toFixed(2)} at start, all on 127.0.0.1`,
);
if (loadavg()[0]! > availableParallelism()) {
  console.log(
    `\n**Warning: the load average at start (${loadavg()[0]!.toFixed(2)}) is above the ${availableParallelism()} CPUs: ` +
      'other work competes for the CPUs, so throughput and latency say little; read the figures by server CPU per ' +
      'request and the spread across rounds.**',
  );
}

try {
  const route = runs('route') ? await measureNotificationRoute(SETTINGS) : { failures: 0 };
  const instructions = runs('route-instructions') ? await measureRouteInstructions(SETTINGS) : { failures: 0 };
  if (runs('queue-add')) await measureQueueAdd(SETTINGS);
  if (runs('queue-delay')) await measureQueueDelay(SETTINGS);
  if (runs('payouts')) await measurePayoutsClient(SETTINGS);
  if (runs('payout-runs')) await measurePayoutRuns(SETTINGS);
  if (runs('payout-ledger')) await measurePayoutLedger(SETTINGS);
  const telemetry = runs('telemetry') ? await measureTelemetry(SETTINGS) : { failures: 0 };
  if (runs('dedupe')) await measureDedupeMemory(SETTINGS.dedupeCheckpoints);
  if (runs('redis-memory')) await measureRedisMemory(SETTINGS.dedupeCheckpoints);
  if (runs('cold-start')) await measureColdStart(SETTINGS.rounds);
  const failures = route.failures + instructions.failures + telemetry.failures;
  if (failures > 0) {
    await shutdown(1, `bench: ${failures} notifications were not acknowledged; the route figures are invalid`);
  }
  await shutdown(0);
} catch (error) {
  await shutdown(1, error);
}
