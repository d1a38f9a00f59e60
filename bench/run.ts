import { createRequire } from 'node:module';
import { availableParallelism, loadavg } from 'node:os';
import { stopAllChildren } from './child-processes.js';
import { measureColdStart } from './phases/cold-start.phase.js';
import { measureDedupeMemory } from './phases/dedupe-memory.phase.js';
import { measureNotificationRoute } from './phases/notification-route.phase.js';
import { measurePayoutsClient } from './phases/payouts-client.phase.js';

/** `--quick` finishes within a minute; the full run takes about ten. Both print the same tables. */
const quick = process.argv.includes('--quick');
const SETTINGS = quick
  ? { warmupSeconds: 1, durationSeconds: 1, rounds: 2, dedupeCheckpoints: [100_000, 200_000], timeLimitMs: 90_000 }
  : { warmupSeconds: 3, durationSeconds: 8, rounds: 5, dedupeCheckpoints: [100_000, 1_000_000], timeLimitMs: 15 * 60_000 };

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
setTimeout(() => void shutdown(1, `bench: stopped after its ${SETTINGS.timeLimitMs / 1000} s time limit`), SETTINGS.timeLimitMs).unref();

const require = createRequire(import.meta.url);
/** Version of `name` as installed for `dependent` (Express and Fastify come with the Nest platform packages). */
const versionOf = (name: string, dependent = name) =>
  (createRequire(require.resolve(`${dependent}/package.json`))(`${name}/package.json`) as { version: string }).version;
console.log(`## nestjs-payouts bench (${quick ? 'quick' : 'full'})\n`);
console.log(
  `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, Nest ${versionOf('@nestjs/core')} ` +
    `(Express ${versionOf('express', '@nestjs/platform-express')}, Fastify ${versionOf('fastify', '@nestjs/platform-fastify')}), ` +
    `${availableParallelism()} CPUs, load average ${loadavg()[0]!.toFixed(2)} at start, all on 127.0.0.1`,
);

try {
  const route = await measureNotificationRoute(SETTINGS);
  await measurePayoutsClient(SETTINGS);
  await measureDedupeMemory(SETTINGS.dedupeCheckpoints);
  await measureColdStart(SETTINGS.rounds);
  if (route.failures > 0) {
    await shutdown(1, `bench: ${route.failures} notification requests were not acknowledged; the route figures are not valid`);
  }
  await shutdown(0);
} catch (error) {
  await shutdown(1, error);
}
