#!/usr/bin/env node
import { EXIT_USAGE, runSimulateCommand } from './simulator/cli/simulate-command.js';

const USAGE = `Usage: nestjs-payouts <command> [options]

Commands:
  simulate    Deliver a payment-method notification to your endpoint like the payouts service does

Run "nestjs-payouts simulate --help" for its options.`;

const output = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
};

const [command, ...args] = process.argv.slice(2);
if (command === 'simulate') {
  process.exitCode = await runSimulateCommand(args, output);
} else if (command === '--help' || command === '-h' || command === 'help') {
  output.out(USAGE);
} else {
  output.err(command === undefined ? 'Error: a command is required.' : `Error: unknown command "${command}".`);
  output.err(USAGE);
  process.exitCode = EXIT_USAGE;
}
