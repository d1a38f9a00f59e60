import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { PAYOUTS_CONFIG } from '../payouts.constants.js';
import type { PayoutsConfig } from '../payouts-config.js';
import { stackOf } from './error-stack.js';
import type { NotificationContext } from './notification-context.interface.js';
import type { NotificationClaim, NotificationDedupeStore } from './notification-dedupe-store.interface.js';
import { notificationDedupeKey } from './notification-dedupe-key.js';
import type { NotificationHandler, NotificationHandlerTable } from './notification-handler-table.js';
import { NotificationHandlersExplorer } from './notification-handlers.explorer.js';
import type { NotificationHttpRequest } from './notification-http-request.interface.js';
import {
  createNotificationReplyWriter,
  NotificationReplies,
  NotificationReply,
  type NotificationReplyWriter,
} from './notification-reply.js';
import { createNotificationVerifier, type NotificationVerifier } from './notification-verifier.js';
import type { PaymentMethodNotification } from './payment-method-notification.js';
import { parsePaymentMethodNotification } from './payment-method-notification.parser.js';

/**
 * Turns one HTTP request into a reply: content type, size, verification, validation, dedupe, handlers.
 * Everything that can be prepared is prepared in `onModuleInit`, before the app accepts requests.
 */
@Injectable()
export class NotificationReceiver implements OnModuleInit {
  private readonly logger = new Logger('PayoutsNotifications');
  private handlers!: NotificationHandlerTable;
  private verify: NotificationVerifier | undefined;
  private writeReply!: NotificationReplyWriter;
  private bodyLimitBytes = 0;
  private dedupeStore!: NotificationDedupeStore;

  constructor(
    @Inject(PAYOUTS_CONFIG) private readonly config: PayoutsConfig,
    @Inject(NotificationHandlersExplorer) private readonly explorer: NotificationHandlersExplorer,
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const config = this.config.notifications;
    if (!config) return;
    this.handlers = this.explorer.explore();
    if (config.verification === 'none') {
      this.logger.warn(
        `Notifications verification is 'none': anyone who finds /${config.path} can post notifications. ` +
          'Configure notifications.verification (secret, allowedIps or verify) in production.',
      );
    } else {
      this.verify = createNotificationVerifier(config.verification, this.logger);
    }
    this.writeReply = createNotificationReplyWriter(this.adapterHost.httpAdapter?.getType());
    this.bodyLimitBytes = config.bodyLimitBytes;
    this.dedupeStore = config.dedupeStore;
  }

  /**
   * Synchronous until something is really asynchronous (an async `verify`, a store returning promises, the
   * handlers), so a refused or duplicate notification costs no promise.
   */
  receive(request: NotificationHttpRequest, response: unknown): void | Promise<void> {
    const reply = this.reply(request);
    if (reply instanceof NotificationReply) {
      this.writeReply(response, reply);
      return;
    }
    return reply.then((settled) => this.writeReply(response, settled));
  }

  private reply(request: NotificationHttpRequest): NotificationReply | Promise<NotificationReply> {
    const receivedAt = Date.now();
    const { headers } = request;
    if (!isJsonMediaType(headers['content-type'])) return NotificationReplies.unsupportedMediaType;
    if (bodySize(request) > this.bodyLimitBytes) return NotificationReplies.payloadTooLarge;
    // Verification comes before any look at the body, so an unverified caller learns nothing about it.
    const verdict = this.verify ? this.verify(request) : true;
    if (verdict === true) return this.accept(request, receivedAt);
    if (verdict === false) return NotificationReplies.unauthorized;
    return verdict.then((verified) => (verified ? this.accept(request, receivedAt) : NotificationReplies.unauthorized));
  }

  /** Validates a verified request's body and hands the notification to its handlers once. */
  private accept(request: NotificationHttpRequest, receivedAt: number): NotificationReply | Promise<NotificationReply> {
    const { body } = request;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return NotificationReplies.notAnObject;
    const parsed = parsePaymentMethodNotification(body as Record<string, unknown>);
    if (parsed.errors) return NotificationReply.invalid(parsed.errors);

    const { notification } = parsed;
    const dedupeKey = notificationDedupeKey(notification);
    const handlers = this.handlers.forEvent(notification.eventType);
    if (handlers.length === 0) {
      this.logger.warn(`No handler for ${notification.eventType} notification ${dedupeKey}; acknowledged`);
      return NotificationReplies.ack;
    }
    // One id per delivery, so a shared store can tell this delivery's claim from another's.
    const claimId = randomUUID();
    const context: NotificationContext = {
      rawBody: request.rawBody,
      headers: request.headers,
      receivedAt: new Date(receivedAt),
      dedupeKey,
      ip: request.ip,
    };
    let claim: NotificationClaim | Promise<NotificationClaim>;
    try {
      claim = this.dedupeStore.claim(dedupeKey, claimId);
    } catch (error) {
      return this.claimFailed(dedupeKey, error);
    }
    if (typeof claim === 'string') return this.afterClaim(claim, handlers, notification, context, claimId);
    return claim.then(
      (settled) => this.afterClaim(settled, handlers, notification, context, claimId),
      (error: unknown) => this.claimFailed(dedupeKey, error),
    );
  }

  /** Re-sends of a handled notification are acknowledged without running the handlers again. */
  private afterClaim(
    claim: NotificationClaim,
    handlers: readonly NotificationHandler[],
    notification: PaymentMethodNotification,
    context: NotificationContext,
    claimId: string,
  ): NotificationReply | Promise<NotificationReply> {
    if (claim === 'handled') return NotificationReplies.ack;
    if (claim !== 'claimed') return NotificationReplies.inProgress;
    return this.dispatch(handlers, notification, context, claimId);
  }

  private claimFailed(dedupeKey: string, error: unknown): NotificationReply {
    this.logger.error(`The dedupe store failed to claim notification ${dedupeKey}; not acknowledged`, stackOf(error));
    return NotificationReplies.failed;
  }

  /** Runs the handlers of a claimed notification: every one to completion, even when another fails. */
  private async dispatch(
    handlers: readonly NotificationHandler[],
    notification: PaymentMethodNotification,
    context: NotificationContext,
    claimId: string,
  ): Promise<NotificationReply> {
    // The reply never precedes a running handler. One handler, the usual case, is awaited without an array.
    const succeeded =
      handlers.length === 1
        ? await this.run(handlers[0]!, notification, context)
        : (await Promise.all(handlers.map((handler) => this.run(handler, notification, context)))).every(Boolean);
    const key = context.dedupeKey;
    // Once the handlers succeeded, acknowledge even if the store cannot record it, rather than have them run again.
    const recorded = this.record(succeeded ? 'complete' : 'release', key, claimId);
    if (recorded) await recorded;
    return succeeded ? NotificationReplies.ack : NotificationReplies.failed;
  }

  /** Awaits one handler; its failure is logged and settles as `false`, so the other handlers still finish. */
  private async run(
    handler: NotificationHandler,
    notification: PaymentMethodNotification,
    context: NotificationContext,
  ): Promise<boolean> {
    try {
      await handler.invoke(notification, context);
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
      const pending = this.dedupeStore[outcome](key, claimId);
      if (pending) return Promise.resolve(pending).then(undefined, (error: unknown) => this.recordFailed(outcome, key, error));
    } catch (error) {
      this.recordFailed(outcome, key, error);
    }
  }

  private recordFailed(outcome: 'complete' | 'release', key: string, error: unknown): void {
    const action = outcome === 'complete' ? `record notification ${key} as handled` : `release notification ${key}`;
    this.logger.error(`The dedupe store failed to ${action}`, stackOf(error));
  }
}

function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === 'application/json') return true;
  if (contentType === undefined) return false;
  const end = contentType.indexOf(';');
  return (end === -1 ? contentType : contentType.slice(0, end)).trim().toLowerCase() === 'application/json';
}

/**
 * The declared Content-Length when there is one (the framework parser already enforced it matches);
 * for a chunked upload, the raw body when the app keeps it, else the size of the parsed JSON.
 */
function bodySize(request: NotificationHttpRequest): number {
  const declared = request.headers['content-length'];
  if (declared !== undefined) return Number(declared);
  return request.rawBody?.length ?? Buffer.byteLength(JSON.stringify(request.body) ?? '');
}
