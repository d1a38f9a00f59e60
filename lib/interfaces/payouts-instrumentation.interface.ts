/*
 * The seam between the package and whatever observes it (the OpenTelemetry add-on, the events of `PayoutsService`).
 * Every value that crosses it is low in cardinality or an id the caller chose: never a body, a header, a credential,
 * nor anything of the shopper. The words are snake_case, as OpenTelemetry's attribute values are.
 */

/**
 * What became of one request to the notification route, as its reply says: `acknowledged` (handlers succeeded, or
 * no handler exists), `duplicate` (already handled: acknowledged again), `in_progress` (409), `failed` (500, a
 * handler failed or ran past `handlerTimeoutMs`), `unauthorized` (401), `invalid` (400), `too_large` (413),
 * `unsupported_media_type` (415); `enqueued` when a queue dispatcher stored it for a worker, whose own trace then ends
 * with the outcome of the handling.
 */
export type NotificationOutcome =
  | 'acknowledged'
  | 'duplicate'
  | 'in_progress'
  | 'failed'
  | 'unauthorized'
  | 'invalid'
  | 'too_large'
  | 'unsupported_media_type'
  | 'enqueued';

/**
 * What the dedupe store answered for a notification's key: `claimed` (first delivery), `in_progress` (another
 * delivery is running its handlers), `handled` (a re-send), or `failed` when the store could not answer.
 */
export type NotificationDedupeResult = 'claimed' | 'in_progress' | 'handled' | 'failed';

/**
 * The W3C trace context of a notification (`traceparent`, `tracestate`, as the app's propagator writes them), for a
 * dispatcher that hands the notification to another process: stored beside it, it lets the worker continue the trace.
 */
export type NotificationTraceCarrier = Readonly<Record<string, string>>;

/** Follows one notification request from its arrival to its reply, or one notification through a queue's worker. */
export interface NotificationTrace {
  /** Called when the request is verified and its body valid: from here on the event type is known. */
  validated(eventType: string): void;
  /** Called with the dedupe store's answer; not called when no handler takes the event type. */
  deduped(result: NotificationDedupeResult): void;
  /** Runs one handler; an implementation may run it inside a context of its own (a span) and time it. */
  runHandler<T>(handler: string, run: () => T): T;
  /**
   * Optional: a handler of the notification is not run, as it succeeded in an earlier delivery or attempt. Called
   * before the handlers that do run.
   */
  handlerSkipped?(handler: string): void;
  /** What a queue dispatcher stores with the notification, for `PayoutsInstrumentation.resumeNotification`. */
  carrier(): NotificationTraceCarrier;
  /** Called once, when the reply (or the worker's outcome) is known. */
  end(outcome: NotificationOutcome): void;
}

/** What the payouts client is calling: `createPayout()`, or `request()` for any other endpoint. */
export type PayoutsCallOperation = 'create_payout' | 'request';

/**
 * What became of one attempt of a call to the payouts API: `retrying` (another attempt follows: a status of
 * `retryOnStatus`, a connection that could not be made, a 401 answered with a fresh token), or how the call ends:
 * `succeeded` (a whole 2xx reply), `rejected` (an error status, not retried), `unknown` (no complete reply: the API
 * may have processed it), `network_error` (never sent, retries used up).
 */
export type PayoutsAttemptOutcome = 'succeeded' | 'retrying' | 'rejected' | 'unknown' | 'network_error';

/** The method and path (below the host, without the query string) of a call to the payouts API. */
export interface PayoutsCallTargetInfo {
  readonly method: string;
  readonly path: string;
}

/** Follows one call to the payouts API over all its attempts. */
export interface PayoutsCallTrace {
  /**
   * Runs the attempts; an implementation may run them inside a context of its own (a span), so that the spans of an
   * HTTP client instrumentation nest under it.
   */
  run<T>(send: () => Promise<T>): Promise<T>;
  /** Attempt number `attempt` (1 first) is being sent: its access token is in hand. */
  attemptStarted(attempt: number): void;
  /**
   * The attempt started last has ended: the reply's status, if a reply's head arrived, and the code of what cut it
   * short (`ECONNREFUSED`, `ETIMEDOUT`, `RESPONSE_TOO_LARGE`…), if anything did.
   */
  attemptEnded(outcome: PayoutsAttemptOutcome, status: number | undefined, errorCode: string | undefined): void;
  /**
   * Called once, when the call settles: `rejection` is the class name of the error it rejected with (the outcome of
   * its last attempt tells why), undefined when it resolved.
   */
  end(rejection: string | undefined): void;
}

/**
 * What one attempt of a payout run's job decided for its payout: `sent`, `refused`, `unknown` (parked), or `retrying`
 * (sent again later, a `429`/`503` pause included).
 */
export type PayoutRunJobOutcome = 'sent' | 'refused' | 'unknown' | 'retrying';

/**
 * What the reconcile sweep's `lookup` answered for one parked payout: `created`, `absent`, `unknown`, or `failed` when
 * it threw, did not answer within `lookupTimeoutMs`, or answered something else.
 */
export type PayoutReconcileLookupAnswer = 'created' | 'absent' | 'unknown' | 'failed';

/** What a payout run's job is about: ids the caller chose. */
export interface PayoutRunJobInfo {
  readonly runId: string;
  readonly requestId: string;
  /** 1 for the job's first attempt. */
  readonly attempt: number;
}

/** Follows one attempt of a payout run's job in a worker. */
export interface PayoutRunJobTrace {
  /** Runs the attempt; an implementation may run it inside a context of its own (a span), so the payout's call nests. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Called once: the outcome this attempt decided, undefined when it decided none (it only ran result handlers again,
   * or found no record); `rejection` is the class name of the error it failed with, undefined when it succeeded.
   */
  end(outcome: PayoutRunJobOutcome | undefined, rejection: string | undefined): void;
}

/**
 * The seam for metrics, traces and events. The default does nothing and hands out shared no-op traces, so a
 * request allocates nothing for it; an implementation (such as the OpenTelemetry one) comes from the `telemetry`
 * option.
 */
export interface PayoutsInstrumentation {
  /** Called when a request reaches the notification route. */
  startNotification(): NotificationTrace;
  /**
   * Continues, in a queue's worker, the trace of a notification whose `carrier()` was stored with it; with an empty
   * or unreadable carrier, the trace goes on under whatever is active in the worker (a new trace when nothing is).
   */
  resumeNotification(carrier: NotificationTraceCarrier): NotificationTrace;
  /**
   * Called once per `createPayout()` or `request()` call, after its checks and before its first attempt, with its
   * method and path (no query string) and its request id.
   */
  startPayoutsCall(
    operation: PayoutsCallOperation,
    target: PayoutsCallTargetInfo,
    requestId: string | undefined,
  ): PayoutsCallTrace;
  /**
   * Optional (payout runs): the trace context active when a run is enqueued, stored with each of its jobs; empty when
   * nothing records traces, and then not stored.
   */
  payoutRunCarrier?(): NotificationTraceCarrier;
  /** Optional (payout runs): one attempt of a payout's job starts in a worker, under the trace of its `carrier`. */
  startPayoutRunJob?(carrier: NotificationTraceCarrier, info: PayoutRunJobInfo): PayoutRunJobTrace;
  /** Optional (payout runs): a run has nothing pending any more (once per run). */
  payoutRunCompleted?(runId: string): void;
  /** Optional (payout runs): a person, or the reconcile sweep, decided on an unknown outcome. */
  payoutRunResolved?(decision: 'sent' | 'absent'): void;
  /** Optional (payout runs): the reconcile sweep looked one parked payout up, whatever then became of the answer. */
  payoutRunLookedUp?(answer: PayoutReconcileLookupAnswer): void;
  /** Optional (payout runs): a payout is still parked after `giveUpAfterMs` (once per payout in a process). */
  payoutRunGivenUp?(): void;
}

/** What the `telemetry` option takes: it builds the instrumentation of each registration (account) at bootstrap. */
export interface PayoutsTelemetry {
  instrument(registration: PayoutsTelemetryRegistration): PayoutsInstrumentation;
}

/** The registration an instrumentation is built for. */
export interface PayoutsTelemetryRegistration {
  /** The registration's `name`, or `'default'`. */
  readonly account: string;
}
