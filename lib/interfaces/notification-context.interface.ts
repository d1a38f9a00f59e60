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
  /**
   * Which run of this handler this is for this notification: `1`, then one more for each earlier run of it that failed
   * (threw, rejected or outlived the time limit), on the route's re-sends as on a queue's retries. A handler that
   * succeeded is not run again, so a handler added by a deploy between two runs starts at `1`.
   */
  readonly attempt: number;
}
