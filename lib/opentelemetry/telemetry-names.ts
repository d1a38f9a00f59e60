/*
 * Every name the OpenTelemetry add-on records, in one place: docs/observability.md documents each in its tables, and a
 * test holds the recorded attribute keys to that list. Metric and attribute names follow OpenTelemetry's semantic conventions
 * (lowercase dotted namespaces, durations in seconds, counts with a `{unit}` annotation); where a general attribute
 * exists (`error.type`, `http.response.status_code`), it is used as the conventions define it.
 */

/** The instrumentation scope: tracer and meter are named after the package. */
export const INSTRUMENTATION_SCOPE = 'nestjs-payouts';

export const SPAN_NAMES = {
  notification: 'payouts.notification',
  /** Followed by the handler's `ClassName.method`: there are as many as the app has handlers. */
  handlerPrefix: 'payouts.handler ',
  payout: 'payouts.create_payout',
  /** An event on the payout's span for each retry. */
  retryEvent: 'payouts.payout.retry',
  /** An event on the notification's span for each handler not run again, as it succeeded before. */
  handlerSkippedEvent: 'payouts.handler.skipped',
  /** One attempt of a payout run's job in a worker. */
  runPayout: 'payouts.run.payout',
} as const;

export const METRIC_NAMES = {
  notificationDeliveries: 'payouts.notification.deliveries',
  notificationDuration: 'payouts.notification.duration',
  handlerDuration: 'payouts.notification.handler.duration',
  handlerSkips: 'payouts.notification.handler.skips',
  payoutRequests: 'payouts.payout.requests',
  payoutDuration: 'payouts.payout.duration',
  payoutRetries: 'payouts.payout.retries',
  runPayouts: 'payouts.run.payouts',
  runCompletions: 'payouts.run.completions',
  runResolutions: 'payouts.run.resolutions',
  reconcileLookups: 'payouts.run.reconcile.lookups',
  reconcileGivenUp: 'payouts.run.reconcile.given_up',
} as const;

export const ATTRIBUTES = {
  account: 'payouts.account',
  eventType: 'payouts.notification.event_type',
  notificationOutcome: 'payouts.notification.outcome',
  dedupe: 'payouts.notification.dedupe',
  handler: 'payouts.handler.name',
  handlerOutcome: 'payouts.handler.outcome',
  requestId: 'payouts.payout.request_id',
  payoutOutcome: 'payouts.payout.outcome',
  attempts: 'payouts.payout.attempts',
  attempt: 'payouts.payout.attempt',
  statusCode: 'http.response.status_code',
  errorType: 'error.type',
  runId: 'payouts.run.id',
  runOutcome: 'payouts.run.outcome',
  resolution: 'payouts.run.resolution',
  reconcileAnswer: 'payouts.run.reconcile.answer',
} as const;

/**
 * Bucket boundaries for durations in seconds, from 5 ms to 10 s, as the semantic conventions advise for HTTP
 * durations; without this advice an SDK would use boundaries meant for milliseconds.
 */
export const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
