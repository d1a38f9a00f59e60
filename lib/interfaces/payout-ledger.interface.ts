import type { PayoutLedgerOutbox } from './payout-outbox.interface.js';

/**
 * Where a payout of a run stands in its ledger. `pending` exists only in a ledger that takes payouts inside the
 * caller's database transaction: written, not yet handed to the queue.
 */
export type PayoutLedgerState = 'pending' | 'queued' | 'sending' | 'retrying' | 'sent' | 'refused' | 'unknown';

/** The states a run's counts report (a `pending` payout is counted as `queued`: it waits to be sent). */
export type PayoutCountedState = Exclude<PayoutLedgerState, 'pending'>;

/** A payout's record, as read back from the ledger. */
export interface PayoutLedgerRecord {
  readonly requestId: string;
  readonly runId: string;
  readonly state: PayoutLedgerState;
  /** Requests sent for it so far. */
  readonly attempt: number;
  /** The outcome as stored (JSON: `{ reply }` or `{ error }`), once there is one. */
  readonly outcome: string | undefined;
  /** The result handlers that already succeeded on the current outcome. */
  readonly handled: readonly string[];
  /** This payout's outcome left its run with nothing pending. */
  readonly completesRun: boolean;
  /** A person's (or the sweep's) decision on an unknown outcome, as stored (JSON). */
  readonly resolution: string | undefined;
  /** When it entered its state (ms since the epoch). */
  readonly since: number;
  /** The request as enqueued, where the ledger keeps it (a durable ledger does; the Redis store leaves it to the job). */
  readonly request?: Readonly<Record<string, unknown>>;
}

/** What claiming one `request_id` for a run did: added, the same body already there, or another body under it. */
export interface PayoutLedgerClaim {
  readonly verdict: 'queued' | 'already' | 'conflict';
  readonly state: PayoutLedgerState;
  readonly runId: string;
}

/** What `begin()` found: send now (the "sending" mark is written), no record, a mark already there, or an outcome. */
export type PayoutLedgerBegin =
  | { readonly step: 'send'; readonly attempt: number; readonly resolution: string | undefined }
  | { readonly step: 'missing' | 'interrupted' | 'settled' };

/** A run's counts per state, and when it first had nothing pending. */
export interface PayoutLedgerCounts {
  readonly counts: Record<PayoutCountedState | 'total', number>;
  readonly completedAt?: number;
}

/** A decision on a payout whose job has not run since it was recorded. */
export interface PayoutLedgerDecision {
  readonly requestId: string;
  readonly decision: 'sent' | 'absent';
}

/** A payout not settled yet, whose queue work can be made again from the ledger (a durable ledger only). */
export interface PayoutLedgerUnsettled {
  readonly requestId: string;
  readonly runId: string;
  readonly state: PayoutLedgerState;
  readonly request: Readonly<Record<string, unknown>>;
}

/**
 * The record of every payout of an account's runs: the seam between payout runs and where that record lives. Each
 * method moves one payout (or a chunk) in one atomic step, so that the "sending" mark, the outcome and the run's
 * counts always agree, whichever worker dies between two steps. Payout runs use Redis beside their queue without a
 * `ledger` option, or the ledger it builds (`payoutLedgerPostgres()` of `nestjs-payouts/postgres`).
 */
export interface PayoutLedger {
  /** Kept beyond the queue's Redis: payout runs then rebuild queue work that Redis lost from it. */
  readonly durable: boolean;
  /** Checks (or creates) what the ledger needs before the app serves; rejects with the reason. */
  open?(): Promise<void>;
  close?(): Promise<void>;
  /**
   * Claims each `request_id` of a chunk for `runId`, in one step: what became of each, in order. `enqueue()` claims its
   * chunks one at a time, in the order of its items.
   */
  claim(
    runId: string,
    items: readonly { requestId: string; fingerprint: string; request: Readonly<Record<string, unknown>> }[],
  ): Promise<PayoutLedgerClaim[]>;
  /**
   * Writes the "sending" mark (owned by `token`) before a request leaves, from queued or retrying only; a mark already
   * there is `interrupted`, unless `takeOver` (the provider dedupes `request_id`), which sends again. A payout found
   * `sent` is `settled`, and a decision `sent` on it no longer awaits its job (`decisionsAwaitingJobs()`): this is it.
   */
  begin(requestId: string, runId: string, token: string, takeOver: boolean): Promise<PayoutLedgerBegin>;
  /** Replaces the mark of `token` (`'*'`: anyone's) with `state`; `lost` when the mark is no longer there. */
  settle(
    requestId: string,
    runId: string,
    token: string,
    state: 'retrying' | 'sent' | 'refused' | 'unknown',
    outcome: object,
  ): Promise<'settled' | 'completed' | 'lost'>;
  /** A decision on an unknown outcome: `resolved`, `missing`, or the state the payout is in when not unknown. */
  resolve(
    requestId: string,
    runId: string,
    decision: 'sent' | 'absent',
    resolution: object,
  ): Promise<'resolved' | 'missing' | PayoutLedgerState>;
  /** The lock that lets one instance at a time sweep the unknown outcomes: `true` while `token` holds it. */
  sweepLock(step: 'acquire' | 'renew' | 'release', token: string, leaseMs: number): Promise<boolean>;
  /**
   * Records that the sweep gave up on a payout parked since `parkedSince` (its record's `since`): `true` for the one
   * call, across instances, that records it, so that the give-up is logged and counted once per payout.
   */
  recordGiveUp(requestId: string, parkedSince: number): Promise<boolean>;
  read(requestId: string): Promise<PayoutLedgerRecord | undefined>;
  markHandled(requestId: string, handled: readonly string[]): Promise<void>;
  /** `undefined` for a run nobody enqueued (or one the ledger no longer keeps). */
  counts(runId: string): Promise<PayoutLedgerCounts | undefined>;
  /** The `request_id`s of unknown outcomes, oldest first, and how many there are in all. */
  unknown(offset: number, limit: number): Promise<{ total: number; requestIds: string[] }>;
  /**
   * The payouts decided (`resolve()`) at least `olderThanMs` ago whose job has not run since, oldest first, up to
   * `limit`: one decided `absent` still queued, one decided `sent` whose job `begin()` has not found settled since.
   * Redis may have failed to queue their job again after the decision.
   */
  decisionsAwaitingJobs(olderThanMs: number, limit: number): Promise<PayoutLedgerDecision[]>;
  /**
   * Payouts queued, sending or retrying since at least `olderThanMs`, in `request_id` order after `after`: a durable
   * ledger's, whose queue work Redis may have lost.
   */
  unsettled?(olderThanMs: number, after: string, limit: number): Promise<PayoutLedgerUnsettled[]>;
  /** Reaches the ledger's store over the connection it holds; rejects when it does not answer. */
  ping?(): Promise<void>;
  /** Payouts written in the caller's own database transaction (`enqueue(items, { db })`): a durable ledger's. */
  readonly outbox?: PayoutLedgerOutbox;
}

/** What the `ledger` option of payout runs takes: builds the ledger of one account. */
export interface PayoutLedgerFactory {
  /** What health checks and logs call it, such as `'postgres'`. */
  readonly kind: string;
  create(context: { readonly account: string }): PayoutLedger;
}
