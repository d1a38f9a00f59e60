import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { stackOf } from '../../common/error-stack.js';
import type { NotificationContext } from '../../interfaces/notification-context.interface.js';
import type {
  NotificationClaim,
  NotificationDedupeStore,
} from '../../interfaces/notification-dedupe-store.interface.js';
import type { NotificationTrace } from '../../interfaces/payouts-instrumentation.interface.js';
import { NOTIFICATION_DEDUPE_STORE, NOTIFICATIONS_CONFIG } from '../../payouts.constants.js';
import type { PaymentMethodNotification } from '../message/payment-method-notification.js';
import type { NotificationsConfig } from '../notifications-config.js';
import type { NotificationDispatchOutcome, NotificationDispatcher } from './notification-dispatcher.js';
import type { NotificationHandler, NotificationHandlerTable } from './notification-handler-table.js';
import { NotificationHandlersExplorer } from './notification-handlers.explorer.js';

/**
 * The default dispatcher: claims the notification in the dedupe store, runs its handlers before the route replies,
 * then records it as handled, or releases it so that the service's re-send runs the handlers again.
 * Synchronous until something is really asynchronous (a store returning promises, the handlers).
 */
@Injectable()
export class InlineNotificationDispatcher implements NotificationDispatcher, OnModuleInit {
  private readonly logger = new Logger('PayoutsNotifications');
  private handlers!: NotificationHandlerTable;

  constructor(
    @Inject(NOTIFICATIONS_CONFIG) private readonly config: NotificationsConfig | false,
    @Inject(NOTIFICATION_DEDUPE_STORE) private readonly store: NotificationDedupeStore,
    @Inject(NotificationHandlersExplorer) private readonly explorer: NotificationHandlersExplorer,
  ) {}

  onModuleInit(): void {
    if (this.config) this.handlers = this.explorer.explore();
  }

  dispatch(
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome> {
    const { dedupeKey } = context;
    const handlers = this.handlers.forEvent(notification.eventType);
    if (handlers.length === 0) {
      this.logger.warn(`No handler for ${notification.eventType} notification ${dedupeKey}; acknowledged`);
      return 'unhandled';
    }
    // One id per delivery, so that a shared store can tell this delivery's claim from another's.
    const claimId = randomUUID();
    let claim: NotificationClaim | Promise<NotificationClaim>;
    try {
      claim = this.store.claim(dedupeKey, claimId);
    } catch (error) {
      return this.claimFailed(dedupeKey, error, trace);
    }
    if (typeof claim === 'string') return this.afterClaim(claim, claimId, handlers, notification, context, trace);
    return claim.then(
      (settled) => this.afterClaim(settled, claimId, handlers, notification, context, trace),
      (error: unknown) => this.claimFailed(dedupeKey, error, trace),
    );
  }

  /** Re-sends of a handled notification are acknowledged without running the handlers again. */
  private afterClaim(
    claim: NotificationClaim,
    claimId: string,
    handlers: readonly NotificationHandler[],
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome> {
    if (claim === 'handled') {
      trace.deduped('handled');
      return 'duplicate';
    }
    if (claim !== 'claimed') {
      trace.deduped('in_progress');
      return 'in-progress';
    }
    trace.deduped('claimed');
    return this.runAll(claimId, handlers, notification, context, trace);
  }

  private claimFailed(dedupeKey: string, error: unknown, trace: NotificationTrace): NotificationDispatchOutcome {
    trace.deduped('failed');
    this.logger.error(`The dedupe store failed to claim notification ${dedupeKey}; not acknowledged`, stackOf(error));
    return 'failed';
  }

  /** Runs the handlers of a claimed notification: every one to completion, even when another fails. */
  private async runAll(
    claimId: string,
    handlers: readonly NotificationHandler[],
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): Promise<NotificationDispatchOutcome> {
    // The reply never precedes a running handler. One handler, the usual case, is awaited without an array.
    const succeeded =
      handlers.length === 1
        ? await this.run(handlers[0]!, notification, context, trace)
        : (await Promise.all(handlers.map((handler) => this.run(handler, notification, context, trace)))).every(
            Boolean,
          );
    const key = context.dedupeKey;
    // Once the handlers succeeded, acknowledge even if the store cannot record it, rather than have them run again.
    const recorded = this.record(succeeded ? 'complete' : 'release', key, claimId);
    if (recorded) await recorded;
    return succeeded ? 'handled' : 'failed';
  }

  /** Awaits one handler; its failure is logged and settles as `false`, so the other handlers still finish. */
  private async run(
    handler: NotificationHandler,
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): Promise<boolean> {
    try {
      await trace.runHandler(handler.name, () => handler.invoke(notification, context));
      return true;
    } catch (error) {
      this.logger.error(
        `${handler.name} failed on notification ${context.dedupeKey}; not acknowledged, so the service sends it again`,
        stackOf(error),
      );
      return false;
    }
  }

  /** Updates the store, returning a promise only when the store is asynchronous; a failure is logged, not thrown. */
  private record(outcome: 'complete' | 'release', key: string, claimId: string): void | Promise<void> {
    try {
      const pending = this.store[outcome](key, claimId);
      if (pending) {
        return Promise.resolve(pending).then(undefined, (error: unknown) => this.recordFailed(outcome, key, error));
      }
    } catch (error) {
      this.recordFailed(outcome, key, error);
    }
  }

  private recordFailed(outcome: 'complete' | 'release', key: string, error: unknown): void {
    const action = outcome === 'complete' ? `record notification ${key} as handled` : `release notification ${key}`;
    this.logger.error(`The dedupe store failed to ${action}`, stackOf(error));
  }
}
