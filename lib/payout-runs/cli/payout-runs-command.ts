import { type CommandOutput, EXIT_USAGE, hiddenIn } from '../../common/command-output.js';
import { escapeControls } from '../../common/printable.js';
import { connectionSecretsHidden, describeConnection } from '../../common/redis-url-connection.js';
import { closeBullmq } from '../../common/close-bullmq.js';
import { withDeadline } from '../../common/with-deadline.js';
import { type PayoutLedgerFactory, PayoutsError } from '../../index.js';
import { PAYOUT_STATES } from '../payout-state-store.js';
import { PayoutRunsService } from '../payout-runs.service.js';
import type { PostgresLedgerArgument } from './ledger-argument.js';
import { parsePayoutRunsArguments, PAYOUT_RUNS_USAGE, type PayoutRunsInvocation } from './payout-runs-arguments.js';
import { watchRun, type WatchTerminal } from './watch-run.js';

export const EXIT_OK = 0;
export const EXIT_NOT_FOUND = 1;
/** `progress --watch` stopped with Ctrl-C, as a shell reports a command ended by SIGINT. */
export const EXIT_INTERRUPTED = 130;

/** Error messages are shown up to this length, on one line. */
const SHOWN_CHARS = 200;

class RedisUnreachable extends Error {}

/** A logger that says nothing: the command prints its own lines. */
const SILENT = { log() {}, error() {}, warn() {} };

/**
 * Opens the ledger `--ledger postgres` names. The command line's entry point gives it, loading
 * `nestjs-payouts/postgres` (and `pg`) only then; it rejects with a message to print, such as what to install.
 */
export type LedgerOpener = (
  ledger: PostgresLedgerArgument,
  timeoutMs: number,
) => Promise<{ factory: PayoutLedgerFactory; close(): Promise<void> }>;

/**
 * Runs `nestjs-payouts payout-runs …` and resolves with the process exit status; a bad command line throws
 * `InvalidArgument`. `terminal` is asked for only by `progress --watch`, which draws on it and stops on Ctrl-C.
 */
export async function runPayoutRunsCommand(
  args: string[],
  output: CommandOutput,
  env: NodeJS.ProcessEnv,
  terminal: () => WatchTerminal & { close(): void } = processTerminal,
  openLedger?: LedgerOpener,
): Promise<number> {
  const parsed = parsePayoutRunsArguments(args, env);
  if (parsed === 'help') {
    output.out(PAYOUT_RUNS_USAGE);
    return EXIT_OK;
  }
  // The URL's credentials never reach the output, whatever an error message echoes.
  output = hiddenIn(output, connectionSecretsHidden(parsed.connection));
  if (parsed.ledger) output = hiddenIn(output, databasePasswordHidden(parsed.ledger));
  let ledger: Awaited<ReturnType<LedgerOpener>> | undefined;
  if (parsed.ledger) {
    try {
      ledger = await openLedger!(parsed.ledger, parsed.timeoutMs);
    } catch (error) {
      output.err(`Error: ${printed(error instanceof Error ? error.message : String(error))}`);
      return EXIT_USAGE;
    }
  }
  const where =
    `the payout runs of ${printed(parsed.account ?? 'the unnamed account')} ` +
    `at ${printed(describeConnection(parsed.connection))}`;
  const config = ledger ? { ...parsed.config, ledger: ledger.factory } : parsed.config;
  const runs = new PayoutRunsService(config, parsed.account ?? 'default', SILENT);
  const errors: Error[] = [];
  runs.queue.on('error', (error) => errors.push(error));
  const unreachable = () => new RedisUnreachable(errors[0]?.message ?? 'no reply');
  try {
    // The ledger's schema is checked first, as at an app's boot.
    await withDeadline(runs.onModuleInit(), parsed.timeoutMs, unreachable);
    if (parsed.action === 'progress' && parsed.watch) {
      const read = () => withDeadline(runs.progress(parsed.runId), parsed.timeoutMs, unreachable);
      return await watch(parsed.runId, read, parsed.intervalMs, where, output, terminal);
    }
    return await withDeadline(perform(runs, parsed, where, output), parsed.timeoutMs, unreachable);
  } catch (error) {
    if (error instanceof PayoutsError) {
      output.err(`Error: ${printed(error.message)}`);
      return EXIT_USAGE;
    }
    const reason = error instanceof RedisUnreachable ? error.message : (errors[0]?.message ?? String(error));
    output.err(`Error: cannot reach Redis for ${where} (${printed(reason)}).`);
    return EXIT_USAGE;
  } finally {
    // A command answered from the PostgreSQL ledger may end before the queue's connection has finished its start-up
    // check, which closeBullmq waits for.
    await closeBullmq(runs.queue);
    await ledger?.close();
  }
}

/** The database URL's password never reaches the output either. */
function databasePasswordHidden({ databaseUrl }: PostgresLedgerArgument): (line: string) => string {
  const { password } = new URL(databaseUrl);
  const secrets = [password, safeDecode(password)].filter(
    (secret): secret is string => secret !== undefined && secret.length >= 4,
  );
  return (line) => secrets.reduce((shown, secret) => shown.split(secret).join('redacted'), line);
}

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

async function perform(
  runs: PayoutRunsService,
  invocation: PayoutRunsInvocation,
  where: string,
  output: CommandOutput,
): Promise<number> {
  switch (invocation.action) {
    case 'progress': {
      const progress = await runs.progress(invocation.runId);
      if (!progress) {
        output.err(`Error: no run ${printed(invocation.runId)} in ${where}.`);
        return EXIT_NOT_FOUND;
      }
      const { counts, completedAt } = progress;
      output.out(
        `Run ${printed(invocation.runId)}: ${counts.total} payouts, ` +
          (completedAt ? `completed ${completedAt.toISOString()}` : 'in progress'),
      );
      for (const state of PAYOUT_STATES) output.out(`  ${state.padEnd(9)} ${counts[state]}`);
      return EXIT_OK;
    }
    case 'unknown': {
      const { total, payouts } = await runs.listUnknown({ limit: invocation.limit });
      output.out(
        `${total} payout${total === 1 ? '' : 's'} of unknown outcome in ${where}` +
          (total > payouts.length ? `, the oldest ${payouts.length} shown` : ''),
      );
      for (const payout of payouts) {
        const error = payout.error ? `${payout.error.name}: ${payout.error.message}`.replace(/\s+/g, ' ') : '';
        output.out(
          [
            printed(payout.requestId),
            `run ${printed(payout.runId)}`,
            `${payout.attempt} request${payout.attempt === 1 ? '' : 's'}`,
            `since ${payout.since.toISOString()}`,
            escapeControls(error, SHOWN_CHARS),
          ].join('  '),
        );
      }
      // Nothing found, as for a run or a payout that is not there: a script can tell "all settled" by the status.
      return total === 0 ? EXIT_NOT_FOUND : EXIT_OK;
    }
    case 'resolve': {
      const { requestId, decision, by, note } = invocation;
      const outcome = await runs.resolveUnknown(requestId, decision, {
        ...(by !== undefined && { by }),
        ...(note !== undefined && { note }),
      });
      if (outcome === 'resolved') {
        const then = decision === 'absent' ? 'it is sent once more under the same request_id' : 'the sent handlers run';
        output.out(`Resolved payout ${printed(requestId)} of ${where} as ${decision}: ${then}`);
        return EXIT_OK;
      }
      const why = {
        'not-found': 'there is no such payout',
        'not-unknown': 'its outcome is not unknown',
        busy: 'its result handlers are still being retried; try again shortly',
      }[outcome];
      output.err(`Error: payout ${printed(requestId)} of ${where} was not resolved: ${why}.`);
      return EXIT_NOT_FOUND;
    }
  }
}

/** `progress --watch`: follows the run until it completes, or until Ctrl-C. */
async function watch(
  runId: string,
  read: Parameters<typeof watchRun>[1],
  intervalMs: number,
  where: string,
  output: CommandOutput,
  terminal: () => WatchTerminal & { close(): void },
): Promise<number> {
  const drawn = terminal();
  try {
    const end = await watchRun(runId, read, intervalMs, output, drawn);
    if (end === 'not-found') {
      output.err(`Error: no run ${printed(runId)} in ${where}.`);
      return EXIT_NOT_FOUND;
    }
    return end === 'completed' ? EXIT_OK : EXIT_INTERRUPTED;
  } finally {
    drawn.close();
  }
}

/** Back to the start of the line above (the one drawn last), and clear it. */
const CLEAR_LAST_LINE = '\u001b[1F\u001b[2K';

/** The process's standard output, and Ctrl-C as a signal: until `close()`, Ctrl-C stops the watch, not the process. */
function processTerminal(): WatchTerminal & { close(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  return {
    isTTY: process.stdout.isTTY === true,
    get columns() {
      return process.stdout.columns || 80;
    },
    interrupted: controller.signal,
    // Straight to the stream the output writes its lines to, in order with them.
    clearLastLine: () => process.stdout.write(CLEAR_LAST_LINE),
    close: () => process.off('SIGINT', stop),
  };
}

/** A value from outside, on one line of the terminal. */
function printed(value: string): string {
  return escapeControls(value, SHOWN_CHARS);
}
