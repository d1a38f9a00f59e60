#!/usr/bin/env node
import { EXIT_USAGE, runSimulateCommand } from './simulator/cli/simulate-command.js';
import { runMockApiCommand } from './testing/cli/mock-api-command.js';

const USAGE = `Usage: nestjs-payouts <command> [options]

Commands:
  simulate    Deliver a payment-method notification to your endpoint like the payouts service does
  mock-api    Run a mock of the payouts API for your app to call (POST /payouts)
  queue       List and replay the notifications queue mode could not handle (needs bullmq)

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

const [command, ...args] = process.argv.slice(2);
if (command === 'simulate') {
  process.exitCode = await runSimulateCommand(args, output);
} else if (command === 'mock-api') {
  process.exitCode = await runMockApiCommand(args, output, process.env);
} else if (command === 'queue') {
  process.exitCode = await runQueueCommand(args);
} else if (command === '--help' || command === '-h' || command === 'help') {
  output.out(USAGE);
} else {
  output.err(command === undefined ? 'Error: a command is required.' : `Error: unknown command "${command}".`);
  output.err(USAGE);
  process.exitCode = EXIT_USAGE;
}
