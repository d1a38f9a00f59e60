import { InvalidArgument, readCommandLine } from '../../common/command-line.js';
import {
  checkedAsArguments,
  redisUrlArgument,
  timerDelayArgument,
  wholeNumberArgument,
} from '../../common/command-line-values.js';
import type { RedisUrlConnection } from '../../common/redis-url-connection.js';
import { resolvePayoutsAccount } from '../../config/payouts-account.js';
import { type PayoutRunsConfig, resolvePayoutRunsOptions } from '../payout-runs-options.js';
import { ledgerArgument, type PostgresLedgerArgument } from './ledger-argument.js';

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
  --ledger postgres       The runs keep their ledger in PostgreSQL (payoutLedgerPostgres()): read and
                          resolve there (needs pg)
  --database-url <url>    With --ledger postgres: postgresql://[user:password@]host[:port]/database
                          (default: the DATABASE_URL environment variable)
  --schema <name>         With --ledger postgres: the ledger's schema (default: nestjs_payouts)
  --limit <n>             unknown: how many to list at most (default: 100)
  --interval-ms <n>       progress --watch: how often to read the counts (default: 1000)
  --timeout-ms <n>        How long to wait for Redis (default: 5000)
  -h, --help              Show this help

Exit status: 0 on success (progress --watch: once the run has completed), 1 when nothing is found:
no such run, no payout of unknown outcome (unknown), or no such unknown payout to resolve; 2 for
invalid options or when Redis (or the ledger's PostgreSQL) cannot be reached; 130 when progress --watch
is stopped with Ctrl-C.`;

export type PayoutRunsInvocation = {
  readonly connection: RedisUrlConnection;
  /** The options of the runs to read, as `PayoutRunsModule` would check them: one connection attempt, no worker. */
  readonly config: PayoutRunsConfig;
  readonly account: string | undefined;
  readonly prefix: string | undefined;
  readonly limit: number;
  readonly timeoutMs: number;
  /** Where the ledger is when it is not Redis. */
  readonly ledger: PostgresLedgerArgument | undefined;
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

/** The parsed command line, or `'help'`; a bad one throws `InvalidArgument`. */
export function parsePayoutRunsArguments(args: string[], env: NodeJS.ProcessEnv): PayoutRunsInvocation | 'help' {
  const commandLine = readCommandLine(args, {
    actions: ['progress', 'unknown', 'resolve'],
    urlOption: '--redis-url',
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
      ledger: { type: 'string' },
      'database-url': { type: 'string' },
      schema: { type: 'string' },
    },
  });
  if (commandLine === 'help') return 'help';
  const { values, action } = commandLine;
  const { account, prefix } = values;
  const connection = redisUrlArgument(values['redis-url'], env);
  const timeoutMs = timerDelayArgument('--timeout-ms', values['timeout-ms'], 5000, 1);
  // The account's name in the words of PayoutsModule, whose `name` it is.
  checkedAsArguments(() => resolvePayoutsAccount(account), { name: '--account' });
  const config = checkedAsArguments(
    () =>
      resolvePayoutRunsOptions({
        // One connection attempt: a command that cannot reach Redis says so and ends, rather than retrying for ever.
        connection: { ...connection, connectTimeout: timeoutMs, retryStrategy: () => null },
        ...(prefix !== undefined && { prefix }),
        ...(account !== undefined && { account }),
        rateLimit: false,
        worker: false,
      }),
    { account: '--account', prefix: '--prefix' },
  );
  const common = {
    connection,
    config,
    account,
    prefix,
    limit: wholeNumberArgument('--limit', values.limit, 100),
    timeoutMs,
    ledger: ledgerArgument(values, env),
  };
  if (action === 'progress') {
    if (values.run === undefined) throw new InvalidArgument('progress takes --run <id>');
    const intervalMs = wholeNumberArgument('--interval-ms', values['interval-ms'], 1000, 100);
    return { ...common, action, runId: values.run, watch: values.watch === true, intervalMs };
  }
  if (action === 'unknown') return { ...common, action };
  if (values['request-id'] === undefined) throw new InvalidArgument('resolve takes --request-id <id>');
  if (values.as !== 'sent' && values.as !== 'absent') {
    throw new InvalidArgument('resolve takes --as sent or --as absent');
  }
  return { ...common, action, requestId: values['request-id'], decision: values.as, by: values.by, note: values.note };
}
