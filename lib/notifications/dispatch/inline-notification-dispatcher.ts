import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { attemptOf, hasSucceeded, nextHandlerRecord } from '../../common/notification-handler-record.js';
import { printable } from '../../common/printable.js';
import type { NotificationContext } from '../../interfaces/notification-context.interface.js';
import type {
  NotificationDedupeStore,
  NotificationHandlerRecord,
  NotificationRecordedClaim,
} from '../../interfaces/notification-dedupe-store.interface.js';
import type { NotificationTrace } from '../../interfaces/payouts-instrumentation.interface.js';
import { NOTIFICATION_DEDUPE_STORE, NOTIFICATIONS_CONFIG } from '../../payouts.constants.js';
import type { PaymentMethodNotification } from '../message/payment-method-notification.js';
import type { NotificationsConfig } from '../notifications-config.js';
import type {
  NotificationDispatchOutcome,
  NotificationDispatcher,
} from '../../interfaces/notification-dispatcher.interface.js';
import { DiscoveredNotificationHandlers } from './discovered-notification-handlers.js';
import { type HandlerDeadline, HandlerDeadlines } from './handler-deadlines.js';
import type { NotificationHandler } from './notification-handler-table.js';
import { PackageLogger } from '../../common/package-logger.js';

/** A notification whose asynchronous handlers are running, under the time limit. */
interface RunningHandlers extends HandlerDeadline {
  /** Answers the route; dropped once called. */
  resolve: ((outcome: NotificationDispatchOutcome) => void) | undefined;
  readonly handlers: readonly NotificationHandler[];
  /** Those of several handlers still running; `undefined` for one handler. */
  readonly unsettled: Set<NotificationHandler> | undefined;
  readonly record: NotificationHandlerRecord | undefined;
  readonly dedupeKey: string;
  readonly claimId: string;
}

/**
 * The default dispatcher: claims the notification in the dedupe store, runs its handlers before the route replies,
 * then records it as handled, or releases it so that the service's re-send runs the handlers again: with a store
 * that keeps records (`claimWithRecord`, `releaseWithRecord`), only those that have not succeeded yet.
 * Synchronous until something is really asynchronous (a store returning promises, the handlers).
 */
@Injectable()
export class InlineNotificationDispatcher implements NotificationDispatcher {
  private readonly logger = new PackageLogger('PayoutsNotifications');
  /** `notifications.handlerTimeoutMs`; unused when the registration serves no route. */
  private readonly timeoutMs: number;
  /** The time limits of the notifications whose handlers are running, one timer for all. */
  private readonly deadlines: HandlerDeadlines<RunningHandlers>;
  /** Whether the store keeps which handlers succeeded; a store written before records existed does not. */
  private readonly recordsHandlers: boolean;
  /**
   * Claim ids are this dispatcher's random prefix (96 bits) and a count: unique across instances sharing a store,
   * and across restarts, like a random UUID per delivery, but without drawing random bytes for each notification.
   */
  private readonly claimIdPrefix = `${randomBytes(12).toString('base64url')}.`;
  private claims = 0;

  constructor(
    @Inject(NOTIFICATIONS_CONFIG) config: NotificationsConfig | false,
    @Inject(NOTIFICATION_DEDUPE_STORE) private readonly store: NotificationDedupeStore,
    @Inject(DiscoveredNotificationHandlers) private readonly handlers: DiscoveredNotificationHandlers,
  ) {
    this.timeoutMs = config ? config.handlerTimeoutMs : 0;
    this.deadlines = new HandlerDeadlines(this.timeoutMs, (running) => this.timedOut(running));
    this.recordsHandlers = typeof store.claimWithRecord === 'function' && typeof store.releaseWithRecord === 'function';
  }

  dispatch(
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome> {
    const { dedupeKey } = context;
    const handlers = this.handlers.forEvent(notification.eventType);
    if (handlers.length === 0) {
      this.logger.warn(`No handler for ${printable(notification.eventType)} notification ${dedupeKey}; acknowledged`);
      return 'unhandled';
    }
    // One id per delivery, so that a shared store can tell this delivery's claim from another's.
    const claimId = this.claimIdPrefix + (++this.claims).toString(36);
    let claim: NotificationRecordedClaim | Promise<NotificationRecordedClaim>;
    try {
      claim = this.recordsHandlers
        ? this.store.claimWithRecord!(dedupeKey, claimId)
        : this.store.claim(dedupeKey, claimId);
    } catch (error) {
      return this.claimFailed(dedupeKey, error, trace);
    }
    if (typeof claim === 'string' || !isThenable(claim)) {
      return this.afterClaim(claim, claimId, handlers, notification, context, trace);
    }
    return claim.then(
      (settled) => this.afterClaim(settled, claimId, handlers, notification, context, trace),
      (error: unknown) => this.claimFailed(dedupeKey, error, trace),
    );
  }

  /** Re-sends of a handled notification are acknowledged without running the handlers again. */
  private afterClaim(
    claim: NotificationRecordedClaim,
    claimId: string,
    handlers: readonly NotificationHandler[],
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome> {
    if (typeof claim === 'object') {
      trace.deduped('claimed');
      return this.runRemaining(claimId, handlers, claim.record, notification, context, trace);
    }
    if (claim === 'handled') {
      trace.deduped('handled');
      return 'duplicate';
    }
    if (claim !== 'claimed') {
      trace.deduped('in_progress');
      return 'in-progress';
    }
    trace.deduped('claimed');
    return this.runAll(claimId, handlers, undefined, notification, context, trace);
  }

  /**
   * A re-send after a delivery whose handlers did not all succeed: runs those that have not succeeded, each told its
   * own attempt. A handler a deploy has added since runs; one it removed is not looked for. When none is left to run,
   * the notification is handled.
   */
  private runRemaining(
    claimId: string,
    handlers: readonly NotificationHandler[],
    record: NotificationHandlerRecord,
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome> {
    const remaining = handlers.filter((handler) => !hasSucceeded(record, handler.id));
    if (remaining.length < handlers.length && trace.handlerSkipped) {
      for (const handler of handlers) if (!remaining.includes(handler)) trace.handlerSkipped(handler.name);
    }
    if (remaining.length === 0) return this.settle(true, remaining, record, context.dedupeKey, claimId);
    return this.runAll(claimId, remaining, record, notification, context, trace);
  }

  private claimFailed(dedupeKey: string, error: unknown, trace: NotificationTrace): NotificationDispatchOutcome {
    trace.deduped('failed');
    this.logger.error(`The dedupe store failed to claim notification ${dedupeKey}; not acknowledged`, error);
    return 'failed';
  }

  /**
   * Runs the handlers of a claimed notification, every one to completion even when another fails, and answers by
   * `handlerTimeoutMs` at the latest. The key is recorded (or released) when the handlers settle, not when the route
   * answers, so a re-send cannot run them while a first run that outlived its timeout may still be running.
   * Synchronous handlers are settled at once, with no timer and no promise.
   */
  private runAll(
    claimId: string,
    handlers: readonly NotificationHandler[],
    record: NotificationHandlerRecord | undefined,
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome> {
    // The reply never precedes a running handler. One handler, the usual case, runs without an array, and needs no
    // set of those still running: the time-limit line can only name that one.
    const single = handlers.length === 1 && record === undefined;
    const unsettled = single ? undefined : new Set<NotificationHandler>();
    const run = single
      ? this.run(handlers[0]!, notification, context, trace)
      : this.runEach(handlers, record, notification, context, trace, unsettled!);
    const { dedupeKey } = context;
    if (!isThenable(run)) return this.settle(run as boolean | readonly boolean[], handlers, record, dedupeKey, claimId);
    const running: RunningHandlers = {
      deadline: 0,
      finished: false,
      next: undefined,
      resolve: undefined,
      handlers,
      unsettled,
      record,
      dedupeKey,
      claimId,
    };
    return new Promise((resolve) => {
      running.resolve = resolve;
      this.deadlines.start(running);
      // One handler's own promise is followed directly, with no promise of its success in between.
      if (single) {
        void Promise.resolve(run).then(
          () => this.settleRunning(running, true),
          (error: unknown) => this.settleRunning(running, this.handlerFailed(handlers[0]!, context, error)),
        );
      } else {
        void (run as Promise<readonly boolean[]>).then((outcomes) => this.settleRunning(running, outcomes));
      }
    });
  }

  /** The handlers of `running` settled: recorded in the store, and answered unless their time limit passed. */
  private settleRunning(running: RunningHandlers, outcomes: boolean | readonly boolean[]): void {
    const inTime = this.deadlines.finish(running);
    const { handlers, record, dedupeKey, claimId } = running;
    const settled = this.settle(outcomes, handlers, record, dedupeKey, claimId);
    if (typeof settled === 'string') this.answerRunning(running, inTime, settled);
    else void settled.then((outcome) => this.answerRunning(running, inTime, outcome));
  }

  private answerRunning(running: RunningHandlers, inTime: boolean, outcome: NotificationDispatchOutcome): void {
    if (inTime) running.resolve!(outcome);
    else this.settledLate(running.dedupeKey, outcome === 'handled', this.deadlines.elapsedMs(running));
    running.resolve = undefined;
  }

  /** The time limit of `running` passed with handlers still running: answered 500, the key left claimed. */
  private timedOut(running: RunningHandlers): void {
    this.logger.error(
      `The handlers of notification ${running.dedupeKey} (${names(running.unsettled ?? running.handlers)}) did not ` +
        `settle within handlerTimeoutMs (${this.timeoutMs} ms); answered 500 so that the service sends it again. ` +
        'The notification stays claimed, and re-sends get 409, until they settle.',
    );
    running.resolve!('failed');
  }

  /**
   * Several handlers (or handlers of a re-send, each with its own attempt), concurrently: whether each succeeded, in
   * their order; a promise only when one of them is asynchronous. `unsettled` holds the handlers still running, so
   * that the time-limit line names the late ones only.
   */
  private runEach(
    handlers: readonly NotificationHandler[],
    record: NotificationHandlerRecord | undefined,
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
    unsettled: Set<NotificationHandler>,
  ): readonly boolean[] | Promise<readonly boolean[]> {
    const results = handlers.map((handler) => {
      const attemptContext = record ? contextOf(context, attemptOf(record, handler.id)) : context;
      const result = this.run(handler, notification, attemptContext, trace);
      if (typeof result === 'boolean') return result;
      unsettled.add(handler);
      return this.succeeded(handler, attemptContext, result).finally(() => unsettled.delete(handler));
    });
    if (results.every((result) => typeof result === 'boolean')) return results as boolean[];
    return Promise.all(results);
  }

  /**
   * Records the outcome of settled handlers (`outcomes`: the one handler's success, or each handler's) in the store;
   * a promise only when the store is asynchronous.
   */
  private settle(
    outcomes: boolean | readonly boolean[],
    handlers: readonly NotificationHandler[],
    record: NotificationHandlerRecord | undefined,
    dedupeKey: string,
    claimId: string,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome> {
    const succeeded = typeof outcomes === 'boolean' ? outcomes : outcomes.every(Boolean);
    const outcome = succeeded ? 'handled' : 'failed';
    // Once the handlers succeeded, acknowledge even if the store cannot record it, rather than have them run again.
    const recorded = succeeded
      ? this.record('complete', dedupeKey, claimId)
      : this.recordsHandlers
        ? this.record('release', dedupeKey, claimId, handlerRecordAfter(record, handlers, outcomes))
        : this.record('release', dedupeKey, claimId);
    return recorded ? recorded.then(() => outcome) : outcome;
  }

  private settledLate(dedupeKey: string, succeeded: boolean, elapsedMs: number): void {
    const outcome = succeeded
      ? 'recorded as handled: a re-send is acknowledged without running them again'
      : this.recordsHandlers
        ? 'released: a re-send runs again only those that did not succeed'
        : 'released: a re-send runs them again';
    this.logger.warn(
      `The handlers of notification ${dedupeKey} settled after ${elapsedMs} ms, past their timeout; ${outcome}`,
    );
  }

  /**
   * Runs one handler: `true` when it succeeded, `false` when it threw (logged, so that the other handlers still
   * finish), and what it returned when that is a promise, for the caller to follow (see `succeeded`).
   */
  private run(
    handler: NotificationHandler,
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): boolean | PromiseLike<unknown> {
    let result: unknown;
    try {
      result = trace.runHandler(handler.name, () => handler.invoke(notification, context));
    } catch (error) {
      return this.handlerFailed(handler, context, error);
    }
    return isThenable(result) ? result : true;
  }

  /** Whether the promise a handler returned fulfilled; a rejection is logged. */
  private succeeded(
    handler: NotificationHandler,
    context: NotificationContext,
    result: PromiseLike<unknown>,
  ): Promise<boolean> {
    return Promise.resolve(result).then(resolvedAsSucceeded, (error: unknown) =>
      this.handlerFailed(handler, context, error),
    );
  }

  private handlerFailed(handler: NotificationHandler, context: NotificationContext, error: unknown): false {
    this.logger.error(
      `${handler.name} failed on notification ${context.dedupeKey}; not acknowledged, so the service sends it again`,
      error,
    );
    return false;
  }

  /**
   * Updates the store (a release with the handlers' `handlerRecord` when the store keeps one), returning a promise only
   * when the store is asynchronous; a failure is logged, not thrown.
   */
  private record(
    outcome: 'complete' | 'release',
    key: string,
    claimId: string,
    handlerRecord?: NotificationHandlerRecord,
  ): void | Promise<void> {
    try {
      const pending = handlerRecord
        ? this.store.releaseWithRecord!(key, claimId, handlerRecord)
        : this.store[outcome](key, claimId);
      if (pending) {
        return Promise.resolve(pending).then(undefined, (error: unknown) => this.recordFailed(outcome, key, error));
      }
    } catch (error) {
      this.recordFailed(outcome, key, error);
    }
  }

  private recordFailed(outcome: 'complete' | 'release', key: string, error: unknown): void {
    const action = outcome === 'complete' ? `record notification ${key} as handled` : `release notification ${key}`;
    this.logger.error(`The dedupe store failed to ${action}`, error);
  }
}

const resolvedAsSucceeded = () => true;

/** The context of a handler's run: the delivery's own, unless this is not the handler's first run. */
function contextOf(context: NotificationContext, attempt: number): NotificationContext {
  return attempt === context.attempt ? context : { ...context, attempt };
}

/** The record a failed delivery leaves: `record` with what became of each of `handlers` this time. */
function handlerRecordAfter(
  record: NotificationHandlerRecord | undefined,
  handlers: readonly NotificationHandler[],
  outcomes: boolean | readonly boolean[],
): NotificationHandlerRecord {
  const succeeded: string[] = [];
  const failed: string[] = [];
  handlers.forEach((handler, index) => {
    const ok = typeof outcomes === 'boolean' ? outcomes : outcomes[index];
    (ok ? succeeded : failed).push(handler.id);
  });
  return nextHandlerRecord(record, succeeded, failed);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function names(handlers: Iterable<NotificationHandler>): string {
  return Array.from(handlers, (handler) => handler.name).join(', ');
}
