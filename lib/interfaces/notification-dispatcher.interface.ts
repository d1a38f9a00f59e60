import type { PayoutsHealthSource } from './payouts-health-source.interface.js';
import type { NotificationContext } from './notification-context.interface.js';
import type { NotificationTrace, NotificationTraceCarrier } from './payouts-instrumentation.interface.js';

/**
 * A verified, valid notification as a dispatcher sees it: a `PaymentMethodNotification` instance, of which a
 * dispatcher needs only the event type and the JSON it serialises to.
 */
export interface DispatchedNotification {
  readonly eventType: string;
  readonly [field: string]: unknown;
}

/**
 * What became of a verified, valid notification: `handled` by every handler, `unhandled` (no handler for its type),
 * `duplicate` of one already handled, `in-progress` elsewhere, `enqueued` (stored in a queue, whose workers run the
 * handlers), or `failed` (the service must send it again). Every outcome but `in-progress` and `failed` is
 * acknowledged.
 */
export type NotificationDispatchOutcome = 'handled' | 'unhandled' | 'duplicate' | 'in-progress' | 'enqueued' | 'failed';

/**
 * Takes a notification the route has verified and validated, and says what became of it; the route turns that into
 * the reply. The default runs the handlers inline, before the reply; queue mode stores the notification instead.
 */
export interface NotificationDispatcher {
  dispatch(
    notification: DispatchedNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome>;
  /**
   * The queue a queueing dispatcher stores notifications in; the registration exports it for dashboards and tools
   * (`getPayoutsQueueToken()` of `nestjs-payouts/queue`). An inline dispatcher has none.
   */
  readonly queue?: object;
  /** What health checks ask of its queue (`nestjs-payouts/terminus`); an inline dispatcher has none. */
  readonly health?: PayoutsHealthSource;
}

/** One discovered `@OnPaymentMethod…()` method, bound to its instance. */
export interface NotificationHandlerRef {
  /** `ClassName.method`, for logs. */
  readonly name: string;
  /**
   * What records of the handlers' success name it by: its `name`, followed by ` #2`, ` #3`… for the second and later
   * instances of one class that all handle notifications (a class provided under several tokens).
   */
  readonly id: string;
  /** Calls the method; it may return a value or a promise, or throw. */
  invoke(notification: DispatchedNotification, context: NotificationContext): unknown;
}

/** A field of a notification that fails validation, named by its dotted path, as the route's 400 reply lists it. */
export interface NotificationFieldProblem {
  readonly field: string;
  readonly message: string;
}

/** What the module gives a dispatcher factory: what it takes to run a registration's handlers anywhere. */
export interface NotificationDispatcherHost {
  /** The registration's account: its `name`, or `'default'`. */
  readonly account: string;
  /**
   * The route's own validation, for a notification stored as JSON: the instances handlers receive, or the fields
   * that fail (a stored notification from before a change of the rules).
   */
  parse(
    value: unknown,
  ):
    | { readonly notification: DispatchedNotification; readonly errors?: undefined }
    | { readonly notification?: undefined; readonly errors: readonly NotificationFieldProblem[] };
  /**
   * The handlers of this account for an event type, catch-all handlers included; empty when there is none.
   * Discovered while the module initialises, so ready from `onApplicationBootstrap` on.
   */
  handlersFor(eventType: string): readonly NotificationHandlerRef[];
  /**
   * The trace of a stored notification, continued in a worker from the `carrier()` of the route's trace that was
   * stored with it, so that instrumentation (OpenTelemetry) follows the notification from the route to its handlers.
   */
  resumeTrace(carrier: NotificationTraceCarrier): NotificationTrace;
}

/**
 * Replaces the inline dispatcher of a registration (`notifications.dispatcher`), such as `payoutsQueue()` of
 * `nestjs-payouts/queue`. Its dispatcher is provided by the module, so Nest runs its lifecycle hooks.
 */
export interface NotificationDispatcherFactory {
  /**
   * `false` when this instance takes no notifications over HTTP (a queue worker): the registration then serves no
   * route and needs no `verification`. Default `true`.
   */
  readonly route?: boolean;
  /**
   * `false` when this instance runs no handlers (a web-only queue instance: the workers run them), so that a missing
   * handler is not reported as dropping notifications here. Default `true`.
   */
  readonly runsHandlers?: boolean;
  /**
   * Where the dispatcher of the registration `account` stores notifications, such as `BullMQ queue
   * bull:payouts-notifications`: two registrations of one app that store in the same place would each run the
   * other's notifications with its own handlers, so the bootstrap fails naming both. A dispatcher that stores
   * nothing has no such method.
   */
  storageOf?(account: string): string;
  /** May resolve later, such as once an optional package has been loaded. */
  create(host: NotificationDispatcherHost): NotificationDispatcher | Promise<NotificationDispatcher>;
}
