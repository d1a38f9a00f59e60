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
  progress --run <id>                 The counts of a run per state
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
  --timeout-ms <n>        How long to wait for Redis (default: 5000)
  -h, --help              Show this help

Exit status: 0 on success, 1 when the run or the unknown payout is not found (or not unknown),
2 for invalid options or when Redis (or the ledger's PostgreSQL) cannot be reached.`;

export type PayoutRunsInvocation = {
  readonly connection: RedisUrlConnection;
  readonly account: string | undefined;
  readonly prefix: string | undefined;
  readonly limit: number;
  readonly timeoutMs: number;
  /** Where the ledger is when it is not Redis. */
  readonly ledger: PostgresLedgerArgument | undefined;
} & (
  | { readonly action: 'progress'; readonly runId: string }
  | { readonly action: 'unknown' }
  | {
      readonly action: 'resolve';
      readonly requestId: string;
      readonly decision: 'sent' | 'absent';
      readonly by: string | undefined;
      readonly note: string | undefined;
    }
);

/** `--ledger postgres` and its connection, never echoed: the URL may hold a password. */
export interface PostgresLedgerArgument {
  readonly kind: 'postgres';
  readonly databaseUrl: string;
  readonly schema: string;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

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
      ledger: { type: 'string' },
      'database-url': { type: 'string' },
      schema: { type: 'string' },
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
    ledger: ledgerArgument(values, env),
  };
  if (action === 'progress') {
    if (values.run === undefined) throw new InvalidArgument('progress takes --run <id>');
    return { ...common, action, runId: values.run };
  }
  if (action === 'unknown') return { ...common, action };
  if (values['request-id'] === undefined) throw new InvalidArgument('resolve takes --request-id <id>');
  if (values.as !== 'sent' && values.as !== 'absent')
    throw new InvalidArgument('resolve takes --as sent or --as absent');
  return { ...common, action, requestId: values['request-id'], decision: values.as, by: values.by, note: values.note };
}

function ledgerArgument(
  values: { ledger?: string; 'database-url'?: string; schema?: string },
  env: NodeJS.ProcessEnv,
): PostgresLedgerArgument | undefined {
  if (values.ledger === undefined || values.ledger === 'redis') {
    if (values['database-url'] !== undefined || values.schema !== undefined) {
      throw new InvalidArgument('--database-url and --schema go with --ledger postgres');
    }
    return undefined;
  }
  if (values.ledger !== 'postgres') throw new InvalidArgument('--ledger must be redis or postgres');
  const databaseUrl = values['database-url'] ?? (env.DATABASE_URL || undefined);
  if (databaseUrl === undefined) {
    throw new InvalidArgument('--ledger postgres takes --database-url (or the DATABASE_URL environment variable)');
  }
  let protocol: string;
  try {
    protocol = new URL(databaseUrl).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'postgresql:' && protocol !== 'postgres:') {
    throw new InvalidArgument('--database-url must be a postgresql:// or postgres:// URL');
  }
  const schema = values.schema ?? 'nestjs_payouts';
  if (!SCHEMA.test(schema)) throw new InvalidArgument('--schema must be a lower-case name of letters, digits and "_"');
  return { kind: 'postgres', databaseUrl, schema };
}
