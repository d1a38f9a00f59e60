import type { CreatePayoutRequest } from '../index.js';

/** How a payout of a run ended: paid, refused (surely not paid), or not known (parked for a person to resolve). */
export type PayoutRunOutcome = 'sent' | 'refused' | 'unknown';

/** What is kept of the error that ended a payout: no credential (the client redacts them), no stack. */
export interface PayoutRunError {
  /** The error's class, such as `PayoutsApiError` or `PayoutOutcomeUnknownError`; `Interrupted` for a payout whose
   * worker died after it began to send. */
  readonly name: string;
  readonly message: string;
  /** The HTTP status, when a reply came. */
  readonly status?: number;
  /** The error code, such as `ECONNRESET` or `ETIMEDOUT`. */
  readonly code?: string;
  /** The reply's body, credentials redacted. */
  readonly body?: unknown;
}

/** A person's decision on an unknown outcome, as `resolveUnknown()` recorded it. */
export interface PayoutResolution {
  readonly decision: 'sent' | 'absent';
  readonly by?: string;
  readonly note?: string;
  /** ISO 8601. */
  readonly at: string;
}

/** What a result handler receives. */
export interface PayoutRunResult {
  /** The `PayoutsModule` registration's name (`'default'` for the unnamed one). */
  readonly account: string;
  readonly runId: string;
  readonly requestId: string;
  readonly request: CreatePayoutRequest;
  readonly outcome: PayoutRunOutcome;
  /**
   * Requests sent for this payout, every one counted: those answered `429` or `503` too (0 when none was: a refusal
   * before sending). Not the job's attempts of `payoutRunJob` events, which a `429` or `503` pause does not use up.
   */
  readonly requestsSent: number;
  /** @deprecated The same number as `requestsSent`, whose name says what it counts; kept for existing handlers. */
  readonly attempt: number;
  /** The 2xx reply of a sent payout (absent when a person resolved it as sent). */
  readonly reply?: { readonly status: number; readonly body: Record<string, unknown> };
  /** Why it was refused, or why its outcome is unknown. */
  readonly error?: PayoutRunError;
  /** Present when a person resolved an unknown outcome as sent. */
  readonly resolution?: PayoutResolution;
}

/** How many payouts of a run are in each state. */
export interface PayoutRunCounts {
  readonly queued: number;
  readonly sending: number;
  readonly retrying: number;
  readonly sent: number;
  readonly refused: number;
  readonly unknown: number;
  readonly total: number;
}

/** What `@OnPayoutRunCompleted()` handlers receive, once, when a run first has nothing queued, sending or retrying. */
export interface PayoutRunSummary {
  readonly account: string;
  readonly runId: string;
  readonly counts: PayoutRunCounts;
}

/**
 * What `@OnPayoutRunProgress()` handlers receive: a run's counts as the workers left them, at most once per
 * `progressIntervalMs`, and a last time when the run completes.
 */
export interface PayoutRunProgressReport extends PayoutRunSummary {
  /** When the run first had nothing queued, sending or retrying: set in its last report only. */
  readonly completedAt: Date | undefined;
}
