import type { IncomingHttpHeaders } from 'node:http';

/** What a handler gets besides the notification itself. */
export interface NotificationContext {
  /** The body bytes as received; `undefined` unless the app was created with `rawBody: true`. */
  readonly rawBody: Buffer | undefined;
  readonly headers: IncomingHttpHeaders;
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
}
