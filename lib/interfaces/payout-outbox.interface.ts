/**
 * The caller's open database transaction, as `enqueue(items, { db })` takes it: anything with a `query(text,
 * values)` method that runs SQL on that transaction's connection, such as a `pg` client between `BEGIN` and `COMMIT`
 * or a TypeORM `QueryRunner`; other libraries through a one-line adapter (see docs/payout-ledger.md). The SQL it is
 * given uses `$1`, `$2`… each once and in that order, and its result may be the rows or an object with `rows`.
 */
export interface PayoutLedgerTransaction {
  query(text: string, values: unknown[]): Promise<unknown> | PromiseLike<unknown>;
}

/** One payout to write as `pending`: its `request_id`, the fingerprint of its body, and the body. */
export interface PayoutPendingItem {
  readonly requestId: string;
  readonly fingerprint: string;
  readonly request: Readonly<Record<string, unknown>>;
}

/** A payout written as `pending` in a committed transaction, for the relay to hand to the queue. */
export interface PayoutPendingRow {
  readonly requestId: string;
  readonly runId: string;
  readonly request: Readonly<Record<string, unknown>>;
  /** The trace context of the `enqueue()` that wrote it, when telemetry records traces. */
  readonly trace: Readonly<Record<string, string>> | undefined;
}

/** What writing one item as `pending` did: written, the same body already there, or another body under its id. */
export interface PayoutPendingWrite {
  readonly verdict: 'pending' | 'already' | 'conflict';
  /** The run the `request_id` belongs to: this call's when written, the first one's otherwise. */
  readonly runId: string;
}

/** Ends what `listenPending()` started. */
export interface PayoutPendingSubscription {
  close(): Promise<void>;
}

/**
 * The transactional outbox of a ledger kept in the merchant's database: payouts written in the caller's own
 * transaction, and moved to the queue once it has committed. A ledger that offers it has an `outbox`.
 */
export interface PayoutLedgerOutbox {
  /**
   * Writes each item as `pending` in the caller's transaction, and asks that the relays be woken when it commits:
   * nothing else happens, so a rollback leaves no trace. What became of each, in order.
   */
  writePending(
    db: PayoutLedgerTransaction,
    runId: string,
    items: readonly PayoutPendingItem[],
    trace: Readonly<Record<string, string>> | undefined,
  ): Promise<PayoutPendingWrite[]>;
  /**
   * Takes up to `limit` committed `pending` payouts that no other relay holds, calls `add` with them (which puts their
   * jobs on the queue), then marks them `queued`, in one transaction: a relay that dies before the end leaves them
   * `pending` for the next one. How many were moved.
   */
  movePending(limit: number, add: (payouts: readonly PayoutPendingRow[]) => Promise<void>): Promise<number>;
  /**
   * Calls `onPending` whenever a transaction that wrote pending payouts of this account commits, and `onError` when
   * the listening connection fails (the caller listens again later; the poll covers the gap).
   */
  listenPending(onPending: () => void, onError: (error: Error) => void): Promise<PayoutPendingSubscription>;
}
