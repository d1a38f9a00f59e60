import { createHash } from 'node:crypto';
import { systemErrorCode } from '../common/network-error-codes.js';
import { withDeadline } from '../common/with-deadline.js';
import { PayoutLedgerUnavailableError, PayoutsError } from '../index.js';
import type { PostgresPool, PostgresPoolClient } from './postgres-pool.js';

class NoReply extends Error {}

/** A statement the ledger runs for every payout, with its name when it is prepared. */
export interface LedgerStatement {
  readonly name?: string;
  readonly text: string;
}

/**
 * Names `text` for a connection to prepare once (`prepared`), or leaves it unnamed for PostgreSQL to parse and plan at
 * every call. The name holds a digest of the text, so that two ledgers on one pool (two schemas) never give one name
 * to two texts, which node-postgres refuses, and the prefix keeps it apart from the app's own statements.
 */
export function ledgerStatement(purpose: string, text: string, prepared: boolean): LedgerStatement {
  if (!prepared) return { text };
  return { name: `nestjs_payouts_${purpose}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`, text };
}

/** SQLSTATE classes of a connection lost or a server going away: the statement's fate is then unknown. */
const CONNECTION_CLASSES = new Set(['08', '57']);

/**
 * Runs `work` on a connection of the pool within `timeoutMs`, connecting included. Past the deadline the connection
 * is closed rather than handed back (its statement may still be running), and a connection that arrives late goes
 * back to the pool. Every failure becomes a `PayoutLedgerUnavailableError` saying whether anything may have been
 * written; its message holds the error's code only, never a connection detail.
 */
export async function withConnection<T>(
  pool: PostgresPool,
  timeoutMs: number,
  operation: string,
  writes: boolean,
  work: (client: PostgresPoolClient) => Promise<T>,
): Promise<T> {
  const connecting = pool.connect();
  let client: PostgresPoolClient;
  try {
    client = await withDeadline(connecting, timeoutMs, () => new NoReply());
  } catch (error) {
    if (error instanceof NoReply)
      connecting.then(
        (late) => late.release(),
        () => undefined,
      );
    throw unavailable(operation, error, 'none', timeoutMs);
  }
  const ignore = () => undefined;
  client.on?.('error', ignore);
  try {
    const result = await withDeadline(work(client), timeoutMs, () => new NoReply());
    client.off?.('error', ignore);
    client.release();
    return result;
  } catch (error) {
    const refused = sqlState(error) !== undefined && !CONNECTION_CLASSES.has(sqlState(error)!.slice(0, 2));
    // A statement the server refused leaves the connection usable; anything else closes it, keeping the listener,
    // as its socket may still report the failure.
    if (refused) client.off?.('error', ignore);
    client.release(refused ? undefined : error instanceof Error ? error : true);
    // The package's own errors (a schema refused) pass through as they are.
    if (error instanceof PayoutsError) throw error;
    throw unavailable(operation, error, refused || !writes ? 'none' : 'unknown', timeoutMs);
  }
}

function unavailable(
  operation: string,
  error: unknown,
  written: 'none' | 'unknown',
  timeoutMs: number,
): PayoutLedgerUnavailableError {
  if (error instanceof NoReply) {
    return new PayoutLedgerUnavailableError(
      operation,
      'timeout',
      written,
      `no reply within timeoutMs (${timeoutMs} ms)`,
    );
  }
  const state = sqlState(error);
  const code = state ?? systemErrorCode(error);
  const detail = state ? `PostgreSQL answered SQLSTATE ${state}` : `the connection failed${code ? ` (${code})` : ''}`;
  return new PayoutLedgerUnavailableError(operation, 'error', written, detail);
}

/** The five-character SQLSTATE of an error PostgreSQL sent. */
function sqlState(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && /\d/.test(code) ? code : undefined;
}
