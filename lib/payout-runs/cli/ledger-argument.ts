import { InvalidArgument } from '../../common/command-line.js';

/** `--ledger postgres` and its connection, never echoed: the URL may hold a password. */
export interface PostgresLedgerArgument {
  readonly kind: 'postgres';
  readonly databaseUrl: string;
  readonly schema: string;
}

/** The schema names `payoutLedgerPostgres()` takes. */
const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** `--ledger`, `--database-url` (else `DATABASE_URL`) and `--schema`: `undefined` for the Redis store. */
export function ledgerArgument(
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
  const protocol = URL.canParse(databaseUrl) ? new URL(databaseUrl).protocol : '';
  if (protocol !== 'postgresql:' && protocol !== 'postgres:') {
    throw new InvalidArgument('--database-url must be a postgresql:// or postgres:// URL');
  }
  const schema = values.schema ?? 'nestjs_payouts';
  if (!SCHEMA.test(schema)) throw new InvalidArgument('--schema must be a lower-case name of letters, digits and "_"');
  return { kind: 'postgres', databaseUrl, schema };
}
