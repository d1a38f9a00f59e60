import type { IncomingHttpHeaders } from 'node:http';
import type { NotificationDedupeStore } from './notification-dedupe-store.interface.js';
import type { NotificationDispatcherFactory } from './notification-dispatcher.interface.js';

/** What a `verify` function sees of an incoming notification request. */
export interface NotificationRequestInfo {
  readonly headers: IncomingHttpHeaders;
  /** Query string parameters of the request URL. */
  readonly query: Readonly<Record<string, unknown>>;
  /** The client address, after the app's trust-proxy setting. */
  readonly ip: string | undefined;
  /** The body bytes as received, when the app was created with `rawBody: true`. */
  readonly rawBody: Buffer | undefined;
}

/** One of several notification secrets accepted at once, while the service's portal moves from one to the next. */
export interface NotificationSecretEntry {
  /** The secret itself. */
  value: string;
  /** Names the secret in the log (never its value), so that you see which one the service sends. Unique. */
  label: string;
  /** When the secret stops being accepted (a `Date`, or an ISO 8601 date-time string). Default: never. */
  notAfter?: Date | string;
}

/** How the route proves a notification comes from the payouts service. Every configured check must pass. */
export interface NotificationVerificationOptions {
  /** A shared secret the merchant puts in the notification URL (`?token=…`) or a header; compared in constant time. */
  secret?: {
    /**
     * The secret, or, while rotating it, the secrets accepted at once: a request presenting any of them that has not
     * passed its `notAfter` is verified.
     */
    value: string | NotificationSecretEntry[];
    /** Query parameter that carries the secret. Default `'token'`. */
    queryParam?: string;
    /** Header that carries the secret instead of the query string. */
    header?: string;
  };
  /** Addresses and CIDR ranges (IPv4 and IPv6) allowed to post notifications. */
  allowedIps?: string[];
  /** Any other check, for example a signature scheme. */
  verify?: (request: NotificationRequestInfo) => boolean | Promise<boolean>;
}

/** How re-sent notifications are recognised. */
export interface NotificationDedupeOptions {
  /** A store shared by several instances (for example backed by Redis). Replaces the built-in in-memory store. */
  store?: NotificationDedupeStore;
  /** How long the built-in store remembers a handled notification. Default 24 hours. */
  ttlMs?: number;
  /** How many notifications the built-in store remembers at most; the oldest are forgotten first. Default `100000`. */
  maxEntries?: number;
}

export interface NotificationsOptions {
  /** Route path, under the app's global prefix; fixed, without parameters or wildcards. Default `'payouts/notifications'`. */
  path?: string;
  /**
   * Required: how requests are verified, or `'none'` to accept any caller (a warning is logged at bootstrap).
   * Unused by an instance that serves no route, such as a worker of `payoutsQueue({ route: false })`.
   */
  verification: NotificationVerificationOptions | 'none';
  /**
   * Largest accepted body in bytes, counted as received: the `Content-Length`, or the raw body's length for a chunked
   * upload (which needs the app created with `rawBody: true`). Default `65536`.
   */
  bodyLimitBytes?: number;
  /**
   * How long the handlers of one notification may run before the route answers `500`, so that the service sends it
   * again. The handlers are not stopped: their notification stays claimed (re-sends get `409`) until they settle, and
   * is then recorded as handled, or released. Default `8000`, below the 10 s that senders commonly wait.
   */
  handlerTimeoutMs?: number;
  /** Recognition of re-sent notifications by the inline dispatcher (not with `dispatcher`). */
  dedupe?: NotificationDedupeOptions;
  /**
   * Your own class decorators, applied to the notification controller;
   * for example `[Public()]` so that a global authentication guard lets the payouts service in.
   */
  controllerDecorators?: ClassDecorator[];
  /**
   * What a verified notification is handed to. Default: its handlers run inline, and the route replies once they
   * succeeded. `payoutsQueue()` of `nestjs-payouts/queue` stores it in a queue instead, whose workers run them.
   */
  dispatcher?: NotificationDispatcherFactory;
}
