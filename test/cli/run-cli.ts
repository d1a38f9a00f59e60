import { fileURLToPath } from 'node:url';
import { type NodeProcessRun, runNodeProcess } from '../node-process.js';

/** The built CLI, as `npx nestjs-payouts` runs it; the test script builds before the tests run. */
export const CLI_PATH = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export type CliRun = NodeProcessRun;

/**
 * Runs the CLI in its own process and collects its output; killed after `timeoutMs` so a hang fails the test.
 * `env` is added to the test's own environment.
 */
export function runCli(args: string[], timeoutMs = 15_000, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return runNodeProcess([CLI_PATH, ...args], { timeoutMs, env: { ...process.env, ...env } });
}
