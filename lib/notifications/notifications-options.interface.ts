import type { IncomingHttpHeaders } from 'node:http';

/** What a `verify` function sees of an incoming notification request. */
export interface NotificationRequestInfo {
  readonly headers: IncomingHttpHeaders;
  /** Query string parameters of the request URL. */
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  /** The client address, after the app's trust-proxy setting. */
  readonly ip: string | undefined;
  /** The body bytes as received, when the app was created with `rawBody: true`. */
  readonly rawBody: Buffer | undefined;
}

/** How the route proves a notification comes from the payouts service. Every configured check must pass. */
export interface NotificationVerificationOptions {
  /** A shared secret the merchant puts in the notification URL (`?token=…`) or a header; compared in constant time. */
  secret?: {
    value: string;
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

export interface NotificationsOptions {
  /** Route path, under the app's global prefix. Default `'payouts/notifications'`. */
  path?: string;
  /** Required: how requests are verified, or `'none'` to accept any caller (a warning is logged at bootstrap). */
  verification: NotificationVerificationOptions | 'none';
  /** Largest accepted body in bytes. Default `65536`. */
  bodyLimitBytes?: number;
}
