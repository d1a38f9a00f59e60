import type { IncomingHttpHeaders } from 'node:http';

/**
 * Where a handler runs: `'route'` inside the request of the notification route, before its reply (the default);
 * `'queue'` on a queue worker, after the route stored the notification and acknowledged it (queue mode).
 */
export type NotificationSource = 'route' | 'queue';

/** What a handler gets besides the notification itself. */
export interface NotificationContext {
  /** The body bytes as received; `undefined` unless the app was created with `rawBody: true`, and from the queue. */
  readonly rawBody: Buffer | undefined;
  /** The request headers; empty from the queue, which never stores them (they may carry the notification secret). */
  readonly headers: IncomingHttpHeaders;
  /** When the route received the notification (on a queue worker too). */
  readonly receivedAt: Date;
  /**
   * Identifies the notification across re-sends: event type, shopper id, payment method id and timestamp, prefixed
   * with `<account>/` for a named registration (`eu/PAYMENT_METHOD_ADDED:…`), so accounts never share a key.
   */
  readonly dedupeKey: string;
  /** The `name` of the registration whose route received it; `'default'` for the unnamed registration. */
  readonly account: string;
  /** The client address, after the app's trust-proxy setting. */
  readonly ip: string | undefined;
  /** `'route'`, or `'queue'` when a queue worker runs the handler. */
  readonly source: NotificationSource;
  /** Which run of the handlers this is: always `1` on the route; on a queue worker, 1 up to the queue's `attempts`. */
  readonly attempt: number;
}
