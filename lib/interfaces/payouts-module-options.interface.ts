import type { NotificationsOptions } from './notifications-options.interface.js';
import type { PayoutsTelemetry } from './payouts-instrumentation.interface.js';
import type { PayoutsTransportOptions } from './payouts-transport-options.interface.js';

/**
 * A fixed access token, or a function returning one. The function is called on first use and its token
 * kept; after a 401 it is called once more (one call shared by concurrent payouts) and the payout resent.
 */
export type AccessTokenSource = string | (() => string | Promise<string>);

/** When and how often a failed `createPayout` call is sent again (always with the same body and `request_id`). */
export interface PayoutsRetryOptions {
  /** Retries after the first attempt. Default `2`; `0` disables retries. */
  maxRetries?: number;
  /** First backoff delay; doubled on each retry, with full jitter. Default `200`. */
  baseDelayMs?: number;
  /** Upper bound of any wait, a `Retry-After` header included, at most 2147483647 (a timer's limit). Default `10000`. */
  maxDelayMs?: number;
  /** Response statuses that prove the payout was not processed. Default `[429, 503]`. */
  retryOnStatus?: number[];
}

/** The transport options (`httpAgent`, `httpsAgent`, `proxy`, `headers`) are named as in `HttpModule.register()`. */
export interface PayoutsModuleOptions extends PayoutsTransportOptions {
  /** Base URL of the payouts API (http or https, no credentials in it); payouts are sent to `{baseUrl}/payouts`. */
  baseUrl: string;
  /** Sent as the `X-API-Key` header. */
  apiKey: string;
  /** Sent as `Authorization: Bearer <token>` (the token alone, without `Bearer `). */
  accessToken: AccessTokenSource;
  /**
   * Hard deadline of each attempt, in milliseconds: the access token, connecting, sending and the whole reply.
   * Default `30000`, at most 2147483647 (a longer timer would fire at once). A whole `createPayout()` call settles within
   * (maxRetries + 2) × timeoutMs + maxRetries × maxDelayMs.
   */
  timeoutMs?: number;
  /**
   * Largest reply body read, counted after decompression. Default `1048576` (1 MiB). A larger 2xx reply rejects
   * with `PayoutOutcomeUnknownError`; a `PayoutsApiError` keeps at most 4,096 characters of any error reply.
   */
  maxResponseBytes?: number;
  /** A number is shorthand for `{ maxRetries: n }`. */
  retries?: number | PayoutsRetryOptions;
  /** Settings of the notification route; `false` registers no route (a payouts-only app). */
  notifications?: NotificationsOptions | false;
  /**
   * Traces and metrics: `payoutsOpenTelemetry()` from `nestjs-payouts/opentelemetry`. Default: none, at no cost.
   * The events of `PayoutsService` (`on('response', …)`) need no option.
   */
  telemetry?: PayoutsTelemetry;
}

/** Extra options of `forRoot` / `forRootAsync` that shape the module rather than its behaviour. */
export interface PayoutsModuleExtras {
  /** Register the module globally, so feature modules can inject `PayoutsService` without importing it. */
  isGlobal?: boolean;
  /**
   * The merchant account this registration is for, when the app has several: its `PayoutsService` is injected with
   * `@InjectPayouts(name)` (plain `PayoutsService` stays the unnamed registration's), and handlers tell accounts apart
   * by `context.account` or take only some with `@OnPaymentMethod…({ account })`. Letters, digits, `-`, `_` and `.`.
   * Each registration has its own credentials, token cache, retries, route, verification and dedupe keys.
   */
  name?: string;
}

/** A class given to `forRootAsync({ useClass })` builds the options in this method. */
export interface PayoutsOptionsFactory {
  createPayoutsOptions(): PayoutsModuleOptions | Promise<PayoutsModuleOptions>;
}
