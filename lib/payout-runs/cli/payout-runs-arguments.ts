import { parseArgs } from 'node:util';
import {
  commandLineProblem,
  InvalidArgument,
  redisUrlArgument,
  wholeNumberArgument,
} from '../../common/command-line.js';
import type { RedisUrlConnection } from '../../common/redis-url-connection.js';

export const PAYOUT_RUNS_USAGE = `Usage: nestjs-payouts payout-runs <progress|unknown|resolve> [options]

Follows payout runs and decides on the payouts whose outcome is unknown: a payout whose request
may have reached the provider without a reply (5xx, timeout, connection lost, worker stopped while
sending) is parked, never sent again by itself, until someone checks with the provider and resolves it.

Commands:
  progress --run <id> [--watch]       The counts of a run per state; with --watch, follow the run
                                      until it completes: a progress bar redrawn on a terminal, else
                                      a line whenever the counts change (Ctrl-C stops, exit 130)
  unknown                             List the payouts whose outcome is unknown, oldest first
  resolve --request-id <id> --as sent|absent [--by <who>] [--note <text>]
                                      sent: the provider has it (the sent handlers run);
                                      absent: it does not (sent once more, same request_id)

Options:
  --redis-url <url>       redis://[user:password@]host:port[/db], or rediss:// for TLS
                          (default: the REDIS_URL environment variable, which keeps a password
                          out of the process list)
  --account <name>        The PayoutsModule registration's name (default: the unnamed one)
  --prefix <prefix>       BullMQ's key prefix, when PayoutRunsModule was given one (default: bull)
  --limit <n>             unknown: how many to list at most (default: 100)
  --interval-ms <n>       progress --watch: how often to read the counts (default: 1000)
  --timeout-ms <n>        How long to wait for Redis (default: 5000)
  -h, --help              Show this help

Exit status: 0 on success (progress --watch: once the run has completed), 1 when the run or the
unknown payout is not found (or not unknown), 2 for invalid options or when Redis cannot be
reached, 130 when progress --watch is stopped with Ctrl-C.`;

export type PayoutRunsInvocation = {
  readonly connection: RedisUrlConnection;
  readonly account: string | undefined;
  readonly prefix: string | undefined;
  readonly limit: number;
  readonly timeoutMs: number;
} & (
  | {
      readonly action: 'progress';
      readonly runId: string;
      /** Follow the run until it completes, reading its counts every `intervalMs`. */
      readonly watch: boolean;
      readonly intervalMs: number;
    }
  | { readonly action: 'unknown' }
  | {
      readonly action: 'resolve';
      readonly requestId: string;
      readonly decision: 'sent' | 'absent';
      readonly by: string | undefined;
      readonly note: string | undefined;
    }
);

/** The parsed command line, `'help'`, or the message of the first problem found. */
export function parsePayoutRunsArguments(
  args: string[],
  env: NodeJS.ProcessEnv,
): PayoutRunsInvocation | 'help' | { problem: string } {
  try {
    return parse(args, env);
  } catch (error) {
    return commandLineProblem(error);
  }
}

function parse(args: string[], env: NodeJS.ProcessEnv): PayoutRunsInvocation | 'help' {
  const { values, positionals } = parseArgs({
    args,
    strict: true,
    allowPositionals: true,
    options: {
      'redis-url': { type: 'string' },
      account: { type: 'string' },
      prefix: { type: 'string' },
      run: { type: 'string' },
      'request-id': { type: 'string' },
      as: { type: 'string' },
      by: { type: 'string' },
      note: { type: 'string' },
      limit: { type: 'string' },
      'timeout-ms': { type: 'string' },
      watch: { type: 'boolean' },
      'interval-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const [action, ...extra] = positionals;
  if (action !== 'progress' && action !== 'unknown' && action !== 'resolve') {
    throw new InvalidArgument(
      action === undefined ? 'a command is required: progress, unknown or resolve' : 'unknown command; see --help',
    );
  }
  if (extra.length > 0) throw new InvalidArgument('unexpected extra argument; see --help');
  const common = {
    connection: redisUrlArgument(values['redis-url'] ?? (env.REDIS_URL || undefined)),
    account: values.account,
    prefix: values.prefix,
    limit: wholeNumberArgument('--limit', values.limit, 100),
    timeoutMs: wholeNumberArgument('--timeout-ms', values['timeout-ms'], 5000),
  };
  if (action === 'progress') {
    if (values.run === undefined) throw new InvalidArgument('progress takes --run <id>');
    const intervalMs = wholeNumberArgument('--interval-ms', values['interval-ms'], 1000, 100);
    return { ...common, action, runId: values.run, watch: values.watch === true, intervalMs };
  }
  if (action === 'unknown') return { ...common, action };
  if (values['request-id'] === undefined) throw new InvalidArgument('resolve takes --request-id <id>');
  if (values.as !== 'sent' && values.as !== 'absent')
    throw new InvalidArgument('resolve takes --as sent or --as absent');
  return { ...common, action, requestId: values['request-id'], decision: values.as, by: values.by, note: values.note };
}
