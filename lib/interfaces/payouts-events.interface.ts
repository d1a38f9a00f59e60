import type {
  NotificationDedupeResult,
  NotificationOutcome,
  PayoutsAttemptOutcome,
  PayoutRunJobOutcome,
  PayoutsCallOperation,
} from './payouts-instrumentation.interface.js';

/** An attempt of a call to the payouts API, about to be sent: emitted as `request`. */
export interface PayoutsRequestEvent {
  /** The registration's `name`, or `'default'`. */
  readonly account: string;
  /** `create_payout` for `createPayout()`, `request` for `request()`. */
  readonly operation: PayoutsCallOperation;
  /** The payout's `request_id`, or the `requestId` of a `request()` call; undefined when it has none. */
  readonly requestId: string | undefined;
  /** 1 for the first attempt; every retry, and the re-send after a 401, counts one more. */
  readonly attempt: number;
  readonly method: string;
  /** The path below the host, without the query string. */
  readonly path: string;
}

/** How that attempt ended: emitted as `response`, once per `request` event. */
export interface PayoutsResponseEvent extends PayoutsRequestEvent {
  /** The reply's status; undefined when no reply arrived. */
  readonly status: number | undefined;
  /** What cut the attempt short (`ECONNREFUSED`, `ETIMEDOUT`, `RESPONSE_TOO_LARGE`…); undefined when nothing did. */
  readonly errorCode: string | undefined;
  /** Milliseconds from sending to the end of the reply (or of the failure), with sub-millisecond precision. */
  readonly elapsedMs: number;
  /** `retrying` when another attempt follows; otherwise how the call ends. */
  readonly outcome: PayoutsAttemptOutcome;
}

/** One request to the notification route (or, in queue mode, one handling by a worker): emitted as `notification`. */
export interface PayoutsNotificationEvent {
  readonly account: string;
  /** The notification's `eventType`; undefined when the request was refused before its body was read. */
  readonly eventType: string | undefined;
  readonly outcome: NotificationOutcome;
  /** The dedupe store's answer; undefined when the store was not asked (a refused request, no handler). */
  readonly dedupe: NotificationDedupeResult | undefined;
  /** Milliseconds from the request's arrival to its reply. */
  readonly elapsedMs: number;
  /**
   * The handlers (`ClassName.method`) not run because they succeeded in an earlier delivery or attempt of this
   * notification; absent when none was skipped.
   */
  readonly skippedHandlers?: readonly string[];
}

/** One attempt of a payout run's job in a worker of this process: emitted as `payoutRunJob`. */
export interface PayoutsPayoutRunJobEvent {
  readonly account: string;
  readonly runId: string;
  readonly requestId: string;
  /**
   * The job's attempt, as BullMQ counts them against `attempts`: 1 first. A `429` or `503` pause uses none up, so
   * several events may carry the same number; a payout's requests are its result's `requestsSent`.
   */
  readonly attempt: number;
  /** What this attempt decided; undefined when it only ran result handlers again (or found no record). */
  readonly outcome: PayoutRunJobOutcome | undefined;
  /** The class name of the error the attempt failed with (to be retried); undefined when it succeeded. */
  readonly rejection: string | undefined;
  /** Milliseconds the attempt took, the payout's request and its result handlers included. */
  readonly elapsedMs: number;
}

/** The events of a registration's `PayoutsService`, by name. */
export interface PayoutsEvents {
  request: PayoutsRequestEvent;
  response: PayoutsResponseEvent;
  notification: PayoutsNotificationEvent;
  payoutRunJob: PayoutsPayoutRunJobEvent;
}
