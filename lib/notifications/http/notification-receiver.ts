import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NotificationContext } from '../../interfaces/notification-context.interface.js';
import type {
  NotificationTrace,
  PayoutsInstrumentation,
} from '../../interfaces/payouts-instrumentation.interface.js';
import {
  NOTIFICATION_DISPATCHER,
  NOTIFICATIONS_CONFIG,
  PAYOUTS_ACCOUNT,
  PAYOUTS_INSTRUMENTATION,
} from '../../payouts.constants.js';
import type { NotificationDispatchOutcome, NotificationDispatcher } from '../../interfaces/notification-dispatcher.interface.js';
import { notificationDedupeKey } from '../message/notification-dedupe-key.js';
import { parsePaymentMethodNotification } from '../message/payment-method-notification.parser.js';
import type { NotificationsConfig } from '../notifications-config.js';
import type { NotificationHttpRequest } from './notification-http-request.interface.js';
import {
  createNotificationReplyWriter,
  NotificationReplies,
  NotificationReply,
  type NotificationReplyWriter,
} from './notification-reply.js';
import { createNotificationVerifier, type NotificationVerifier } from './notification-verifier.js';

/** The reply for each dispatch outcome: only a failure asks the service to send the notification again. */
const DISPATCH_REPLIES: Readonly<Record<NotificationDispatchOutcome, NotificationReply>> = {
  handled: NotificationReplies.ack,
  unhandled: NotificationReplies.ack,
  duplicate: NotificationReplies.duplicate,
  'in-progress': NotificationReplies.inProgress,
  enqueued: NotificationReplies.ack,
  failed: NotificationReplies.failed,
};

/**
 * The HTTP side of the notification route: content type, size, verification and validation, in that order; a valid
 * notification goes to the dispatcher, whose outcome becomes the reply. Everything that can be prepared is prepared
 * in `onModuleInit`, before the app accepts requests.
 */
@Injectable()
export class NotificationReceiver implements OnModuleInit {
  private readonly logger = new Logger('PayoutsNotifications');
  private verify: NotificationVerifier | undefined;
  private writeReply!: NotificationReplyWriter;
  private bodyLimitBytes = 0;

  constructor(
    @Inject(NOTIFICATIONS_CONFIG) private readonly config: NotificationsConfig | false,
    @Inject(NOTIFICATION_DISPATCHER) private readonly dispatcher: NotificationDispatcher,
    @Inject(PAYOUTS_INSTRUMENTATION) private readonly instrumentation: PayoutsInstrumentation,
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(PAYOUTS_ACCOUNT) private readonly account: string,
  ) {}

  onModuleInit(): void {
    const config = this.config;
    if (!config || !config.route) return;
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
  }

  /**
   * Synchronous until something is really asynchronous (an async `verify`, a store returning promises, the
   * handlers), so a refused or duplicate notification costs no promise.
   */
  receive(request: NotificationHttpRequest, response: unknown): void | Promise<void> {
    const trace = this.instrumentation.startNotification();
    const reply = this.reply(request, trace);
    if (reply instanceof NotificationReply) {
      this.send(response, reply, trace);
      return;
    }
    return reply.then((settled) => this.send(response, settled, trace));
  }

  private send(response: unknown, reply: NotificationReply, trace: NotificationTrace): void {
    this.writeReply(response, reply);
    trace.end(reply.outcome);
  }

  private reply(request: NotificationHttpRequest, trace: NotificationTrace): NotificationReply | Promise<NotificationReply> {
    const receivedAt = Date.now();
    const { headers } = request;
    if (!isJsonMediaType(headers['content-type'])) return NotificationReplies.unsupportedMediaType;
    if (bodySize(request) > this.bodyLimitBytes) return NotificationReplies.payloadTooLarge;
    // Verification comes before any look at the body, so an unverified caller learns nothing about it.
    const verdict = this.verify ? this.verify(request) : true;
    if (verdict === true) return this.accept(request, receivedAt, trace);
    if (verdict === false) return NotificationReplies.unauthorized;
    return verdict.then((verified) =>
      verified ? this.accept(request, receivedAt, trace) : NotificationReplies.unauthorized,
    );
  }

  /** Validates a verified request's body and hands the notification to the dispatcher. */
  private accept(
    request: NotificationHttpRequest,
    receivedAt: number,
    trace: NotificationTrace,
  ): NotificationReply | Promise<NotificationReply> {
    const { body } = request;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return NotificationReplies.notAnObject;
    const parsed = parsePaymentMethodNotification(body as Record<string, unknown>);
    if (parsed.errors) return NotificationReply.invalid(parsed.errors);

    const { notification } = parsed;
    trace.validated(notification.eventType);
    const context: NotificationContext = {
      rawBody: request.rawBody,
      headers: request.headers,
      receivedAt: new Date(receivedAt),
      dedupeKey: notificationDedupeKey(notification, this.account),
      ip: request.ip,
      account: this.account,
      source: 'route',
      attempt: 1,
    };
    const outcome = this.dispatcher.dispatch(notification, context, trace);
    if (typeof outcome === 'string') return DISPATCH_REPLIES[outcome];
    return outcome.then((settled) => DISPATCH_REPLIES[settled]);
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
