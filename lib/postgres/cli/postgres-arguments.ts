import { InvalidArgument, readCommandLine } from '../../common/command-line.js';
import { timerDelayArgument } from '../../common/command-line-values.js';

export const POSTGRES_USAGE = `Usage: nestjs-payouts postgres migrate [options]

Creates the tables of the payout ledger (PostgreSQL) or brings them to this version of
nestjs-payouts, in one transaction, under a lock: several processes may run it at once.
It never downgrades: a schema migrated by a newer version is left as it is.

Options:
  --database-url <url>    postgresql://[user:password@]host[:port]/database
                          (default: the DATABASE_URL environment variable, which keeps a password
                          out of the process list)
  --schema <name>         The schema of the ledger, as given to payoutLedgerPostgres()
                          (default: nestjs_payouts)
  --timeout-ms <n>        How long to wait for PostgreSQL, the lock included (default: 30000)
  -h, --help              Show this help

Exit status: 0 when the schema is at this version, 1 when it is newer than this version knows,
2 for invalid options or when PostgreSQL cannot be reached.`;

export interface PostgresMigrateInvocation {
  readonly action: 'migrate';
  readonly databaseUrl: string;
  readonly schema: string;
  readonly timeoutMs: number;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** The parsed command line, or `'help'`; a bad one throws `InvalidArgument`. */
export function parsePostgresArguments(args: string[], env: NodeJS.ProcessEnv): PostgresMigrateInvocation | 'help' {
  const commandLine = readCommandLine(args, {
    actions: ['migrate'],
    urlOption: '--database-url',
    options: {
      'database-url': { type: 'string' },
      schema: { type: 'string' },
      'timeout-ms': { type: 'string' },
    },
  });
  if (commandLine === 'help') return 'help';
  const { values, action } = commandLine;
  const databaseUrl = values['database-url'] ?? (env.DATABASE_URL || undefined);
  if (databaseUrl === undefined) {
    throw new InvalidArgument('--database-url is required (or the DATABASE_URL environment variable)');
  }
  const protocol = URL.canParse(databaseUrl) ? new URL(databaseUrl).protocol : '';
  if (protocol !== 'postgresql:' && protocol !== 'postgres:') {
    throw new InvalidArgument('--database-url must be a postgresql:// or postgres:// URL');
  }
  const schema = values.schema ?? 'nestjs_payouts';
  if (!SCHEMA.test(schema)) throw new InvalidArgument('--schema must be a lower-case name of letters, digits and "_"');
  return {
    action,
    databaseUrl,
    schema,
    timeoutMs: timerDelayArgument('--timeout-ms', values['timeout-ms'], 30_000, 1),
  };
}
