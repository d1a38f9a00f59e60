import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NotificationContext } from '../../interfaces/notification-context.interface.js';
import type {
  NotificationOutcome,
  NotificationTrace,
  PayoutsInstrumentation,
} from '../../interfaces/payouts-instrumentation.interface.js';
import {
  NOTIFICATION_DISPATCHER,
  NOTIFICATIONS_CONFIG,
  PAYOUTS_ACCOUNT,
  PAYOUTS_INSTRUMENTATION,
} from '../../payouts.constants.js';
import type {
  NotificationDispatchOutcome,
  NotificationDispatcher,
} from '../../interfaces/notification-dispatcher.interface.js';
import { notificationDedupeKey } from '../message/notification-dedupe-key.js';
import { parsePaymentMethodNotification } from '../message/payment-method-notification.parser.js';
import type { NotificationsConfig } from '../notifications-config.js';
import { onExpressError } from './express-hooks.js';
import { type FastifyRequestLike, onFastifyError, onFastifyPreParsing } from './fastify-hooks.js';
import { expressRefusal, fastifyRefusal } from './framework-refusal.js';
import { printable } from '../../common/printable.js';
import type { NotificationHttpRequest } from './notification-http-request.interface.js';
import {
  type NotificationRefusal,
  refusalByHeaders,
  refusalBySize,
  refusalByUnknownSize,
  refusalByVerification,
} from './notification-refusal.js';
import { NotificationRefusalLog } from './notification-refusal-log.js';
import {
  createNotificationReplyWriter,
  NotificationReplies,
  NotificationReply,
  type NotificationReplyWriter,
} from './notification-reply.js';
import { createNotificationVerifier, type NotificationVerifier } from './notification-verifier.js';
import { isNotificationsRoute } from './notifications-route-metadata.js';

/** The reply for each dispatch outcome: only a failure asks the service to send the notification again. */
const DISPATCH_REPLIES: Readonly<Record<NotificationDispatchOutcome, NotificationReply>> = {
  handled: NotificationReplies.ack,
  unhandled: NotificationReplies.ack,
  duplicate: NotificationReplies.duplicate,
  'in-progress': NotificationReplies.inProgress,
  enqueued: NotificationReplies.enqueued,
  failed: NotificationReplies.failed,
};

/** What an asynchronous step settles with: a reply, or the dispatcher's outcome, which stands for one. */
type PendingReply = NotificationReply | NotificationDispatchOutcome;

/**
 * The HTTP side of the notification route, in this order: the headers (media type, charset, encoding, an empty body),
 * the size when it is known, verification, a size that is unknown, then the body; a valid notification goes to the
 * dispatcher, whose outcome becomes the reply. Nothing before verification walks the body, and an unverified caller
 * learns nothing beyond `401` unless its headers alone are refused. Every refusal is logged (rate-limited), and everything that can
 * be prepared is prepared in `onModuleInit`, before the app accepts requests.
 *
 * The framework reads and parses the body before the route runs. On Fastify the header checks also run before its
 * parser, which would otherwise answer a UTF-16 or compressed body differently from Express: the same bytes get the
 * same reply on both adapters.
 */
@Injectable()
export class NotificationReceiver implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('PayoutsNotifications');
  private readonly refusals = new NotificationRefusalLog(this.logger);
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
    const adapter = this.adapterHost.httpAdapter;
    this.writeReply = createNotificationReplyWriter(adapter?.getType());
    this.bodyLimitBytes = config.bodyLimitBytes;
    const type = adapter?.getType();
    if (type === 'fastify') {
      const instance: unknown = adapter.getInstance();
      onFastifyPreParsing(instance, (request, reply) => this.answeredBeforeParsing(request, reply));
      onFastifyError(instance, (request, error) => {
        if (this.isOwnFastifyRoute(request)) this.frameworkRefused(request, fastifyRefusal(error));
      });
    } else if (type === 'express') {
      const isOwnPath = routePathMatcher(config.path);
      onExpressError(adapter, (request, error) => {
        if (request.method === 'POST' && isOwnPath(request.path)) this.frameworkRefused(request, expressRefusal(error));
      });
    }
  }

  onModuleDestroy(): void {
    this.refusals.close();
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
    return reply.then((settled) =>
      this.send(response, typeof settled === 'string' ? DISPATCH_REPLIES[settled] : settled, trace),
    );
  }

  private send(response: unknown, reply: NotificationReply, trace: NotificationTrace): void {
    this.writeReply(response, reply);
    trace.end(reply.outcome);
  }

  private isOwnFastifyRoute(request: FastifyRequestLike): boolean {
    return isNotificationsRoute(request.routeOptions.config, this.config as NotificationsConfig);
  }

  /** Fastify: refuses by the headers and the declared size before the parser reads the body of this route. */
  private answeredBeforeParsing(request: FastifyRequestLike, reply: unknown): boolean {
    if (!this.isOwnFastifyRoute(request)) return false;
    const { headers } = request;
    const refusal = refusalByHeaders(headers) ?? refusalBySize(headers, undefined, this.bodyLimitBytes);
    if (refusal === undefined) return false;
    this.send(reply, this.refuse(request, refusal), this.instrumentation.startNotification());
    return true;
  }

  /** The reply, or a promise of it or of the dispatcher's outcome (mapped to its reply by `receive`). */
  private reply(request: NotificationHttpRequest, trace: NotificationTrace): NotificationReply | Promise<PendingReply> {
    const receivedAt = Date.now();
    const refusal =
      refusalByHeaders(request.headers) ?? refusalBySize(request.headers, request.rawBody, this.bodyLimitBytes);
    if (refusal !== undefined) return this.refuse(request, refusal);
    // Verification comes before any look at the body, so an unverified caller learns nothing about it.
    const failure = this.verify?.(request);
    if (failure === undefined) return this.accept(request, receivedAt, trace);
    if (typeof failure === 'string') return this.refuse(request, refusalByVerification(failure));
    return failure.then((settled): PendingReply | Promise<PendingReply> =>
      settled === undefined
        ? this.accept(request, receivedAt, trace)
        : this.refuse(request, refusalByVerification(settled)),
    );
  }

  /** Logs a refusal the framework's parser answered before the route ran; the framework sends its own reply. */
  private frameworkRefused(
    request: { readonly ip: string | undefined },
    refusal: { status: number; reason: string } | undefined,
  ): void {
    if (refusal === undefined) return;
    this.refusals.refused(refusal.status, request.ip, refusal.reason);
    this.instrumentation.startNotification().end(outcomeOfStatus(refusal.status));
  }

  private refuse(
    request: { readonly ip: string | undefined },
    { reply, reason }: NotificationRefusal,
  ): NotificationReply {
    this.refusals.refused(reply.status, request.ip, reason);
    return reply;
  }

  /** Validates a verified request's body and hands the notification to the dispatcher. */
  private accept(
    request: NotificationHttpRequest,
    receivedAt: number,
    trace: NotificationTrace,
  ): NotificationReply | Promise<NotificationDispatchOutcome> {
    const unknownSize = refusalByUnknownSize(request.headers, request.rawBody);
    if (unknownSize !== undefined) return this.refuse(request, unknownSize);
    const { body } = request;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return this.refuse(request, { reply: NotificationReplies.notAnObject, reason: 'the body is not a JSON object' });
    }
    const parsed = parsePaymentMethodNotification(body as Record<string, unknown>);
    if (parsed.errors) {
      const fields = parsed.errors.map((error) => printable(error.field)).join(', ');
      return this.refuse(request, {
        reply: NotificationReply.invalid(parsed.errors),
        reason: `invalid fields ${fields}`,
      });
    }

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
    return typeof outcome === 'string' ? DISPATCH_REPLIES[outcome] : outcome;
  }
}

/** The outcome a framework's 4xx stands for. */
function outcomeOfStatus(status: number): NotificationOutcome {
  switch (status) {
    case 413:
      return 'too_large';
    case 415:
      return 'unsupported_media_type';
    case 411:
      return 'length_required';
    default:
      return 'invalid';
  }
}

/**
 * Whether an Express request path is the route's: its configured path, under any global prefix, in any case and with
 * an optional trailing slash, as Express matches it. Only used to log the refusals of Express's body parser, which
 * runs before routing, so the route itself cannot be asked.
 */
function routePathMatcher(path: string): (requestPath: string) => boolean {
  const own = `/${path.replace(/^\/+|\/+$/g, '').toLowerCase()}`;
  return (requestPath) => {
    const lower = requestPath.toLowerCase();
    return (lower.endsWith('/') ? lower.slice(0, -1) : lower).endsWith(own);
  };
}
