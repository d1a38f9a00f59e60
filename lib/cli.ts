#!/usr/bin/env node
import { EXIT_USAGE, runSimulateCommand } from './simulator/cli/simulate-command.js';
import { runMockApiCommand } from './testing/cli/mock-api-command.js';

const USAGE = `Usage: nestjs-payouts <command> [options]

Commands:
  simulate    Deliver a payment-method notification to your endpoint like the payouts service does
  mock-api    Run a mock of the payouts API for your app to call (POST /payouts)
  queue       List and replay the notifications queue mode could not handle (needs bullmq)
  payout-runs Follow payout runs and resolve the payouts of unknown outcome (needs bullmq)
  postgres    Create or upgrade the payout ledger's tables in PostgreSQL (needs pg)

Run "nestjs-payouts <command> --help" for its options.`;

const output = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
};

/** Loaded only when asked for, so that `simulate` works without bullmq installed. */
async function runQueueCommand(args: string[]): Promise<number> {
  let command: typeof import('./queue/cli/queue-command.js');
  try {
    command = await import('./queue/cli/queue-command.js');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !String(error).includes("'bullmq'")) {
      throw error;
    }
    output.err('Error: the queue command needs the bullmq package: npm install bullmq');
    return EXIT_USAGE;
  }
  return command.runQueueCommand(args, output, process.env);
}

/** Loaded only when asked for; its entry point names what to install when bullmq (or ioredis) is missing. */
async function runPayoutRunsCommand(args: string[]): Promise<number> {
  let command: typeof import('./payout-runs/cli/payout-runs-command.js');
  try {
    command = await import('./payout-runs/cli/payout-runs-command.js');
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('nestjs-payouts/payout-runs needs')) throw error;
    output.err(`Error: ${error.message}`);
    return EXIT_USAGE;
  }
  // `--ledger postgres` loads the PostgreSQL ledger, and pg with it, only when given.
  const openLedger: import('./payout-runs/cli/payout-runs-command.js').LedgerOpener = async (ledger, timeoutMs) =>
    (await import('./postgres/cli/postgres-ledger-opener.js')).openPostgresLedger(ledger, timeoutMs);
  return command.runPayoutRunsCommand(args, output, process.env, openLedger);
}

/** Loaded only when asked for; it names what to install when pg is missing. */
async function runPostgresCommand(args: string[]): Promise<number> {
  const command = await import('./postgres/cli/postgres-command.js');
  return command.runPostgresCommand(args, output, process.env);
}

const [command, ...args] = process.argv.slice(2);
if (command === 'simulate') {
  process.exitCode = await runSimulateCommand(args, output);
} else if (command === 'mock-api') {
  process.exitCode = await runMockApiCommand(args, output, process.env);
} else if (command === 'queue') {
  process.exitCode = await runQueueCommand(args);
} else if (command === 'payout-runs') {
  process.exitCode = await runPayoutRunsCommand(args);
} else if (command === 'postgres') {
  process.exitCode = await runPostgresCommand(args);
} else if (command === '--help' || command === '-h' || command === 'help') {
  output.out(USAGE);
} else {
  output.err(command === undefined ? 'Error: a command is required.' : `Error: unknown command "${command}".`);
  output.err(USAGE);
  process.exitCode = EXIT_USAGE;
}
