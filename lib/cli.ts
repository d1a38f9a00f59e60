#!/usr/bin/env node
import { closestWord } from './common/command-line.js';
import {
  commandLineSecretsHidden,
  type CommandOutput,
  describeDefect,
  EXIT_DEFECT,
  EXIT_USAGE,
  runCommand,
  terminalOutput,
} from './common/command-output.js';
import { runSimulateCommand } from './simulator/cli/simulate-command.js';
import { runMockApiCommand } from './testing/cli/mock-api-command.js';

const USAGE = `Usage: nestjs-payouts <command> [options]

Commands:
  simulate    Deliver a payment-method notification to your endpoint like the payouts service does
  mock-api    Run a mock of the payouts API for your app to call (POST /payouts, GET /payouts/<id>)
  queue       List and replay the notifications queue mode could not handle (needs bullmq)
  payout-runs Follow payout runs and resolve the payouts of unknown outcome (needs bullmq)
  postgres    Create or upgrade the payout ledger's tables in PostgreSQL (needs pg)

Run "nestjs-payouts <command> --help" for its options.`;

const COMMANDS: Record<string, (args: string[], output: CommandOutput) => Promise<number>> = {
  simulate: (args, output) => runSimulateCommand(args, output),
  'mock-api': (args, output) => runMockApiCommand(args, output, process.env),
  queue: runQueueCommand,
  'payout-runs': runPayoutRunsCommand,
  postgres: runPostgresCommand,
};

/** Loaded only when asked for, so that `simulate` works without bullmq installed. */
async function runQueueCommand(args: string[], output: CommandOutput): Promise<number> {
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
async function runPayoutRunsCommand(args: string[], output: CommandOutput): Promise<number> {
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
  return command.runPayoutRunsCommand(args, output, process.env, undefined, openLedger);
}

/** Loaded only when asked for; it names what to install when pg is missing. */
async function runPostgresCommand(args: string[], output: CommandOutput): Promise<number> {
  const command = await import('./postgres/cli/postgres-command.js');
  return command.runPostgresCommand(args, output, process.env);
}

/** A word that is not a command is never shown: it may be a secret given where an option's name was forgotten. */
function unknownCommand(command: string | undefined, output: CommandOutput): number {
  const close = command === undefined ? undefined : closestWord(command, Object.keys(COMMANDS));
  output.err(
    command === undefined
      ? 'Error: a command is required.'
      : `Error: unknown command (not shown: it may be a secret)${close ? `; did you mean ${close}?` : '.'}`,
  );
  output.err(USAGE);
  return EXIT_USAGE;
}

const output = terminalOutput(process.stdout, process.stderr);
const [command, ...args] = process.argv.slice(2);
const run = command === undefined || !Object.hasOwn(COMMANDS, command) ? undefined : COMMANDS[command];
if (run !== undefined) {
  const hideSecrets = commandLineSecretsHidden(args, process.env);
  // An error outside the command's own promise (an event nobody listens to) ends the process the same way.
  const fail = (error: unknown) => {
    output.err(describeDefect(command!, error, hideSecrets));
    process.exit(EXIT_DEFECT);
  };
  process.on('uncaughtException', fail).on('unhandledRejection', fail);
  process.exitCode = await runCommand(command!, () => run(args, output), output, hideSecrets);
} else if (command === '--help' || command === '-h' || command === 'help') {
  output.out(USAGE);
} else {
  process.exitCode = unknownCommand(command, output);
}
