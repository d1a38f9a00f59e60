import { type CommandOutput, EXIT_USAGE } from '../../common/command-output.js';
import { escapeControls } from '../../common/printable.js';
import { withDeadline } from '../../common/with-deadline.js';
import { PayoutLedgerSchemaError } from '../../index.js';
import { migratePayoutLedger } from '../payout-ledger-schema.js';
import { loadPg, type PgClient, type PgModule } from './pg-module.js';
import { parsePostgresArguments, POSTGRES_USAGE, type PostgresMigrateInvocation } from './postgres-arguments.js';

export const EXIT_OK = 0;
export const EXIT_NEWER = 1;

class NoReply extends Error {}

/**
 * Runs `nestjs-payouts postgres …` and resolves with the process exit status; a bad command line throws
 * `InvalidArgument`.
 */
export async function runPostgresCommand(
  args: string[],
  output: CommandOutput,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const parsed = parsePostgresArguments(args, env);
  if (parsed === 'help') {
    output.out(POSTGRES_USAGE);
    return EXIT_OK;
  }
  const pg = await loadPg();
  if (!pg) {
    output.err('Error: nestjs-payouts postgres needs the pg package: npm install pg');
    return EXIT_USAGE;
  }
  return migrate(pg, parsed, output);
}

async function migrate(pg: PgModule, invocation: PostgresMigrateInvocation, output: CommandOutput): Promise<number> {
  const { databaseUrl, schema, timeoutMs } = invocation;
  const where = `schema ${schema} of ${describe(databaseUrl)}`;
  const client: PgClient = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  try {
    await withDeadline(client.connect(), timeoutMs, () => new NoReply());
    const { from, to } = await withDeadline(migratePayoutLedger(client, schema), timeoutMs, () => new NoReply());
    output.out(
      from === to
        ? `The payout ledger's ${where} is at version ${to}: nothing to do.`
        : `Migrated the payout ledger's ${where} from version ${from} to ${to}.`,
    );
    return EXIT_OK;
  } catch (error) {
    if (error instanceof PayoutLedgerSchemaError) {
      output.err(`Error: ${error.message}.`);
      return EXIT_NEWER;
    }
    output.err(`Error: cannot migrate the payout ledger's ${where} (${reasonOf(error, timeoutMs)}).`);
    return EXIT_USAGE;
  } finally {
    await withDeadline(client.end(), 1000, () => new NoReply()).catch(() => undefined);
  }
}

/** The database and its host, never the user's password nor the URL's parameters. */
function describe(url: string): string {
  const { hostname, port, pathname } = new URL(url);
  const database = decodeURIComponent(pathname.slice(1)) || 'the default database';
  const host = decodeURIComponent(hostname) || 'the default host';
  return escapeControls(`database ${database} on ${host}${port ? `:${port}` : ''}`, 200);
}

/** Why it failed, by code: PostgreSQL's messages may quote the connection's settings. */
function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof NoReply) return `no reply within ${timeoutMs} ms`;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,20}$/.test(code) ? `error ${code}` : 'the connection failed';
}
