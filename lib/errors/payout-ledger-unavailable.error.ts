import { PayoutsError } from './payouts.error.js';

/**
 * What an operation that failed on the payout ledger left written:
 * - `none`: nothing (no connection, or the database refused the statement, which it then rolled back);
 * - `some`: part of an `enqueue()` (its first chunks), the rest not;
 * - `unknown`: no reply came, so the last statement may or may not have committed.
 */
export type PayoutLedgerWritten = 'none' | 'some' | 'unknown';

/**
 * The payout ledger's database (PostgreSQL) did not answer within the ledger's `timeoutMs`, or answered with an
 * error; or, with the Redis store as the ledger, Redis did not answer `progress()` or `listUnknown()` within
 * `enqueueTimeoutMs`. Retrying is safe whatever `written` says: `enqueue()` again reports each payout already written as
 * `already-queued` and writes the rest, and a worker parks rather than re-sends a payout whose mark it cannot read.
 * The message names the operation and the error's code, never a connection detail.
 */
export class PayoutLedgerUnavailableError extends PayoutsError {
  /** Always `true`: see the class's description. */
  readonly retrySafe = true;

  constructor(
    readonly operation: string,
    /** `'timeout'` when no reply came within `timeoutMs`, `'error'` when the client or the database reported one. */
    readonly reason: 'timeout' | 'error',
    readonly written: PayoutLedgerWritten,
    /** What failed: the SQLSTATE or system error code, or the deadline; never a connection detail. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`The payout ledger could not ${operation}: ${detail}; ${WRITTEN[written]}.`, options);
  }
}

const WRITTEN: Record<PayoutLedgerWritten, string> = {
  none: 'nothing was written',
  some: 'the first payouts were written, the rest not',
  unknown: 'it may or may not have been written',
};
