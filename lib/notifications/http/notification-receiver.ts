import { isUtf8 } from 'node:buffer';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { PayoutsRegistrations } from '../../interfaces/payouts-registrations.interface.js';
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
  PAYOUTS_REGISTRATIONS,
} from '../../payouts.constants.js';
import type {
  NotificationDispatchOutcome,
  NotificationDispatcher,
} from '../../interfaces/notification-dispatcher.interface.js';
import { notificationDedupeKey } from '../message/notification-dedupe-key.js';
import { parsePaymentMethodNotification } from '../message/payment-method-notification.parser.js';
import { fieldsWithReplacementCharacters } from '../message/replacement-characters.js';
import type { NotificationsConfig } from '../notifications-config.js';
import { type BodyStreamLike, watchBody, type WatchedBody } from './body-watch.js';
import {
  countExpressChunkedBodies,
  expressPostRoutePaths,
  type ExpressRequestLike,
  onExpressError,
} from './express-hooks.js';
import {
  type FastifyRequestLike,
  keepWatchedBody,
  onFastifyError,
  onFastifyPreParsing,
  onFastifyRoute,
  watchedBodyOf,
} from './fastify-hooks.js';
import { expressRefusal, fastifyRefusal } from './framework-refusal.js';
import { printable } from '../../common/printable.js';
import type { NotificationHttpRequest } from './notification-http-request.interface.js';
import {
  type NotificationRefusal,
  refusalByHeaders,
  refusalBySize,
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
import { PackageLogger } from '../../common/package-logger.js';

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
 * the declared size, verification, the size of a chunked body as counted, then the body (its bytes valid UTF-8 where
 * the route sees them, then its fields); a valid notification goes to the dispatcher, whose outcome becomes the
 * reply. Nothing before verification walks the body, and an unverified caller learns nothing beyond `401` unless its
 * headers alone are refused. Every refusal is logged (rate-limited), and everything that can be prepared is prepared
 * in `onModuleInit`, before the app accepts requests.
 *
 * The framework reads and parses the body before the route runs. On Fastify the header checks also run before its
 * parser, which would otherwise answer a UTF-16 or compressed body differently from Express: the same bytes get the
 * same reply on both adapters.
 */
@Injectable()
export class NotificationReceiver implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new PackageLogger('PayoutsNotifications');
  private refusals: NotificationRefusalLog | undefined;
  /** On Express, the bytes of a chunked body counted as its parser read them (see `countExpressChunkedBodies`). */
  private countedOnExpress: (request: object) => number | undefined = () => undefined;
  private verify: NotificationVerifier | undefined;
  private writeReply!: NotificationReplyWriter;
  private bodyLimitBytes = 0;
  /** On Fastify, whether the route got its own hooks as it was registered (see `onFastifyRoute`). */
  private readonly routeHooked: () => boolean = () => false;

  constructor(
    @Inject(NOTIFICATIONS_CONFIG) private readonly config: NotificationsConfig | false,
    @Inject(NOTIFICATION_DISPATCHER) private readonly dispatcher: NotificationDispatcher,
    @Inject(PAYOUTS_INSTRUMENTATION) private readonly instrumentation: PayoutsInstrumentation,
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(PAYOUTS_ACCOUNT) private readonly account: string,
    @Inject(PAYOUTS_REGISTRATIONS) private readonly registrations: PayoutsRegistrations,
  ) {
    // Before Nest registers the routes, which comes after the providers are built, so the hooks go on the route only.
    const adapter = adapterHost.httpAdapter as typeof adapterHost.httpAdapter | undefined;
    if (config && config.route && adapter?.getType() === 'fastify') {
      this.routeHooked = onFastifyRoute(
        adapter.getInstance(),
        (routeConfig) => isNotificationsRoute(routeConfig, config),
        {
          answeredBeforeParsing: (request, reply, payload) => this.answeredBeforeParsing(request, reply, payload),
          failed: (request, error) => this.frameworkRefused(request, fastifyRefusal(error)),
        },
      );
    }
  }

  onModuleInit(): void {
    const config = this.config;
    if (!config || !config.route) return;
    this.refusals = new NotificationRefusalLog(this.logger, `account ${this.account}, /${routeKey(config.path)}`);
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
    if (type === 'fastify' && !this.routeHooked()) {
      const instance: unknown = adapter.getInstance();
      onFastifyPreParsing(
        instance,
        (request, reply, payload) =>
          this.isOwnFastifyRoute(request) && this.answeredBeforeParsing(request, reply, payload),
      );
      onFastifyError(instance, (request, error) => {
        if (this.isOwnFastifyRoute(request)) this.frameworkRefused(request, fastifyRefusal(error));
      });
    } else if (type === 'express') {
      this.countedOnExpress = countExpressChunkedBodies(adapter.getInstance());
      const isOwnPath = this.ownExpressPaths(config.path, expressPostRoutePaths(adapter.getInstance()));
      onExpressError(adapter, (request, error, response) => {
        if (request.method !== 'POST' || !isOwnPath(request.path)) return false;
        return this.answeredAfterExpressParser(request, expressRefusal(error), response);
      });
    }
  }

  onModuleDestroy(): void {
    this.refusals?.close();
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

  /**
   * Fastify, for a request of this route: refuses by the headers and the declared size before the parser reads the
   * body; otherwise watches the bytes as the parser reads them, to count a chunked body and to see bytes that are not
   * UTF-8.
   */
  private answeredBeforeParsing(request: FastifyRequestLike, reply: unknown, payload: BodyStreamLike): boolean {
    const { headers } = request;
    const refusal = refusalByHeaders(headers) ?? refusalBySize(headers, undefined, this.bodyLimitBytes);
    if (refusal === undefined) {
      keepWatchedBody(request, watchBody(payload, this.bodyLimitBytes));
      return false;
    }
    this.send(reply, this.refuse(request, refusal), this.instrumentation.startNotification());
    return true;
  }

  /**
   * Express: its parser refused a request of this route before the route ran. A request the route refuses by its
   * headers alone gets the route's reply, as on Fastify, where those checks run before the parser: Express's parser
   * decodes UTF-16 and compressed bodies, and would otherwise answer them in its own way. Anything else is only
   * logged, and Express's reply goes out.
   */
  private answeredAfterExpressParser(
    request: ExpressRequestLike,
    parserRefusal: { status: number; reason: string } | undefined,
    response: unknown,
  ): boolean {
    if (parserRefusal === undefined) return false;
    const refusal = refusalByHeaders(request.headers);
    if (refusal === undefined) {
      this.frameworkRefused(request, parserRefusal);
      return false;
    }
    this.send(response, this.refuse(request, refusal), this.instrumentation.startNotification());
    return true;
  }

  /** The reply, or a promise of it or of the dispatcher's outcome (mapped to its reply by `receive`). */
  private reply(request: NotificationHttpRequest, trace: NotificationTrace): NotificationReply | Promise<PendingReply> {
    const receivedAt = Date.now();
    // On Fastify a watched body's headers and declared size were checked before its parser ran; what only the count
    // of a chunked body tells is checked after verification, on both adapters, by `accept`.
    const watched = watchedBodyOf(request);
    if (watched === undefined) {
      const refusal =
        refusalByHeaders(request.headers) ?? refusalBySize(request.headers, undefined, this.bodyLimitBytes);
      if (refusal !== undefined) return this.refuse(request, refusal);
    }
    // Verification comes before any look at the body, so an unverified caller learns nothing about it.
    const failure = this.verify?.(request);
    if (failure === undefined) return this.accept(request, receivedAt, trace, watched);
    if (typeof failure === 'string') return this.refuse(request, refusalByVerification(failure));
    return failure.then((settled): PendingReply | Promise<PendingReply> =>
      settled === undefined
        ? this.accept(request, receivedAt, trace, watched)
        : this.refuse(request, refusalByVerification(settled)),
    );
  }

  /** Logs a refusal the framework's parser answered before the route ran; the framework sends its own reply. */
  private frameworkRefused(
    request: { readonly ip: string | undefined },
    refusal: { status: number; reason: string } | undefined,
  ): void {
    if (refusal === undefined) return;
    this.refusals!.refused(refusal.status, request.ip, refusal.reason);
    this.instrumentation.startNotification().end(outcomeOfStatus(refusal.status));
  }

  private refuse(
    request: { readonly ip: string | undefined },
    { reply, reason }: NotificationRefusal,
  ): NotificationReply {
    this.refusals!.refused(reply.status, request.ip, reason);
    return reply;
  }

  /** Validates a verified request's body and hands the notification to the dispatcher. */
  private accept(
    request: NotificationHttpRequest,
    receivedAt: number,
    trace: NotificationTrace,
    watched: WatchedBody | undefined,
  ): NotificationReply | Promise<NotificationDispatchOutcome> {
    // A chunked body counted as it arrived; the framework's own parser limit bounded what it read.
    const { headers } = request;
    const received =
      headers['content-length'] === undefined
        ? (watched?.length ?? this.countedOnExpress(request) ?? request.rawBody?.length)
        : undefined;
    const counted = refusalBySize(headers, received, this.bodyLimitBytes);
    if (counted !== undefined) return this.refuse(request, counted);
    const { body } = request;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return this.refuse(request, { reply: NotificationReplies.notAnObject, reason: 'the body is not a JSON object' });
    }
    if (request.rawBody !== undefined ? !isUtf8(request.rawBody) : watched?.utf8 === false) {
      return this.refuse(request, notUtf8(body));
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
      headers,
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

  /**
   * Whether an Express request path is this route's, compared whole with the paths Express serves it at (global
   * prefix included), in any case and with an optional trailing slash, as Express matches them. Only used for the
   * refusals of Express's body parser, which runs before routing, so the route itself cannot be asked. A registered
   * path is this registration's when its configured path is the longest of the app's notification paths that ends it:
   * `/eu/payouts/notifications` belongs to the account at `eu/payouts/notifications`, not to the one at
   * `payouts/notifications`.
   */
  private ownExpressPaths(path: string, registered: readonly string[]): (requestPath: string) => boolean {
    const notificationPaths = this.registrations.all.flatMap(({ notificationsPath }) =>
      notificationsPath === undefined ? [] : [`/${routeKey(notificationsPath)}`],
    );
    const own = `/${routeKey(path)}`;
    const ownerOf = (routePath: string) =>
      notificationPaths
        .filter((candidate) => routePath === candidate || routePath.endsWith(candidate))
        .reduce((longest, candidate) => (candidate.length > longest.length ? candidate : longest), '');
    const owned = new Set(
      registered.map((routePath) => `/${routeKey(routePath)}`).filter((routePath) => ownerOf(routePath) === own),
    );
    return (requestPath) => {
      const lower = requestPath.toLowerCase();
      return owned.has(lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower);
    };
  }
}

/** The outcome a framework's 4xx stands for. */
function outcomeOfStatus(status: number): NotificationOutcome {
  switch (status) {
    case 413:
      return 'too_large';
    case 415:
      return 'unsupported_media_type';
    default:
      return 'invalid';
  }
}

/**
 * `400` for a body whose bytes are not valid UTF-8, naming the fields whose keys or values hold what the decoder made
 * of them (U+FFFD), so that the sender sees where its encoding went wrong; the body as a whole if none does.
 */
function notUtf8(body: object): NotificationRefusal {
  const fields = fieldsWithReplacementCharacters(body);
  const message = 'must be valid UTF-8';
  const errors = (fields.length > 0 ? fields : ['(body)']).map((field) => ({ field, message }));
  return {
    reply: NotificationReply.invalid(errors),
    reason: `bytes that are not UTF-8 in ${errors.map((error) => printable(error.field)).join(', ')}`,
  };
}

/** A route path as routers compare it: its segments, lower-cased, without leading, trailing or repeated slashes. */
function routeKey(path: string): string {
  return path.split('/').filter(Boolean).join('/').toLowerCase();
}
