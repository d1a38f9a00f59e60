/**
 * What became of one request to the notification route, as its reply says: `acknowledged` (handlers succeeded, or
 * no handler exists), `duplicate` (already handled: acknowledged again), `in-progress` (409), `failed` (500, a
 * handler failed or ran past `handlerTimeoutMs`), `unauthorized` (401), `invalid` (400), `length-required` (411),
 * `too-large` (413), `unsupported-media-type` (415).
 */
export type NotificationOutcome =
  | 'acknowledged'
  | 'duplicate'
  | 'in-progress'
  | 'failed'
  | 'unauthorized'
  | 'invalid'
  | 'length-required'
  | 'too-large'
  | 'unsupported-media-type';

/** Follows one notification request from its arrival to its reply. */
export interface NotificationTrace {
  /** Called when the request is verified and its body valid: from here on the event type is known. */
  validated(eventType: string): void;
  /** Runs one handler; an implementation may run it inside a context of its own (a span) and time it. */
  runHandler<T>(handler: string, run: () => T): T;
  /** Called once, when the reply is known. */
  end(outcome: NotificationOutcome): void;
}

/**
 * The seam for metrics and traces. The default does nothing and costs one call per notification; an
 * implementation (such as the OpenTelemetry one) is given in the module options.
 */
export interface PayoutsInstrumentation {
  startNotification(): NotificationTrace;
}
