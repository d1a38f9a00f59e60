import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import { PayoutsEventEmitter, type PayoutsEventListener } from '../common/events/payouts-event-emitter.js';
import { isJsonObject } from '../common/json-object.js';
import type { PayoutsEvents } from '../interfaces/payouts-events.interface.js';
import type { PayoutsInstrumentation } from '../interfaces/payouts-instrumentation.interface.js';
import { PAYOUTS_CLIENT_CONFIG, PAYOUTS_EVENTS, PAYOUTS_INSTRUMENTATION } from '../payouts.constants.js';
import { type AccessTokenFetchOutcome, AccessTokenProvider } from './access-token-provider.js';
import { warnOfDoubledPayoutsPath } from './base-url-check.js';
import { warnOfShortCredentials } from './credential-redactor.js';
import { loadHttpService } from './http-service-loader.js';
import type { CreatePayoutRequest } from './create-payout-request.interface.js';
import { validatePayoutRequest } from './payout-request-validator.js';
import type { PayoutResult } from './payout-result.interface.js';
import { replyBody } from './payout-reply.js';
import { callSettings, requestCall } from './payouts-api-call.js';
import { PayoutsApiClient } from './payouts-api-client.js';
import type { PayoutsApiRequest } from './payouts-api-request.interface.js';
import type { PayoutsApiResponse } from './payouts-api-response.interface.js';
import { PayoutsApiTransport } from './payouts-api-transport.js';
import type { PayoutsCallOptions } from './payouts-call-options.interface.js';
import type { PayoutsClientConfig } from './payouts-client-config.js';
import { PackageLogger } from '../common/package-logger.js';

/**
 * Creates payouts on the payouts API: validates, sends, and retries only what surely was not processed. Emits
 * `request` and `response` for each attempt of a call, and `notification` for each request to this registration's
 * notification route (see `on()`).
 */
@Injectable()
export class PayoutsService implements OnApplicationShutdown {
  private readonly transport: PayoutsApiTransport;
  private readonly client: PayoutsApiClient;
  private readonly payoutsPath: string;
  readonly #accessToken: AccessTokenProvider;

  constructor(
    lazyModules: LazyModuleLoader,
    @Inject(PAYOUTS_CLIENT_CONFIG) private readonly config: PayoutsClientConfig,
    @Inject(PAYOUTS_INSTRUMENTATION) instrumentation: PayoutsInstrumentation,
    @Inject(PAYOUTS_EVENTS) private readonly events: PayoutsEventEmitter,
  ) {
    const logger = new PackageLogger(PayoutsService.name);
    this.transport = new PayoutsApiTransport(() => loadHttpService(lazyModules), config.transport);
    const accessToken = new AccessTokenProvider(config.accessToken);
    this.#accessToken = accessToken;
    this.client = new PayoutsApiClient(config, this.transport, accessToken, logger, instrumentation);
    this.payoutsPath = new URL(config.payoutsUrl).pathname;
    warnOfDoubledPayoutsPath(config, logger);
    warnOfShortCredentials(config, logger);
  }

  /**
   * How the last call of the `accessToken` function ended (`{ ok, at, problem? }`), for health checks; `undefined`
   * before the first call, or with a fixed token. Never holds the token.
   */
  get lastAccessTokenFetch(): AccessTokenFetchOutcome | undefined {
    return this.#accessToken.lastFetch;
  }

  /**
   * Sends `POST {baseUrl}/payouts` and resolves with the 2xx reply; `TBody` says what you expect its body to be
   * (it is not checked). Rejects with `PayoutValidationError` (nothing sent), `PayoutsCallOptionsError` (nothing
   * sent), `PayoutsApiError`, `PayoutsNetworkError`, `PayoutOutcomeUnknownError`, `PayoutsAccessTokenError` or
   * `PayoutsAbortedError`. Settles within (maxRetries + 2) × timeoutMs + maxRetries × maxDelayMs.
   */
  async createPayout<TBody extends object = Record<string, unknown>>(
    request: CreatePayoutRequest,
    options?: PayoutsCallOptions,
  ): Promise<PayoutResult<TBody>> {
    await validatePayoutRequest(request);
    const reply = await this.client.send({
      operation: 'create_payout',
      method: 'POST',
      url: this.config.payoutsUrl,
      body: JSON.stringify(request),
      requestId: request.request_id,
      target: { method: 'POST', path: this.payoutsPath },
      safe: false,
      ...callSettings(this.config, options),
    });
    const parsed = replyBody(reply.text);
    return { status: reply.status, headers: reply.headers, body: (isJsonObject(parsed) ? parsed : {}) as TBody };
  }

  /**
   * Sends any request to the payouts API, for endpoints `createPayout()` does not cover (retrieving a payout,
   * listing, other payout methods), with the same credentials, token refresh, deadlines, size cap, redaction and
   * errors. Retries follow `createPayout()`'s rules; a GET, HEAD or OPTIONS whose reply was lost is retried too.
   * Rejects as `createPayout()` does, and with `PayoutsCallOptionsError` for a malformed request (nothing sent).
   */
  async request<TBody = unknown>(request: PayoutsApiRequest): Promise<PayoutsApiResponse<TBody>> {
    const reply = await this.client.send(requestCall(this.config, request));
    const body = reply.text === '' ? undefined : replyBody(reply.text);
    return { status: reply.status, headers: reply.headers, body: body as TBody };
  }

  /**
   * Calls `listener` with every `request` (an attempt about to be sent), `response` (how it ended) or `notification`
   * (a request to the notification route, once its reply is known) of this registration, synchronously. The events
   * carry ids, methods, paths, statuses, timings and outcomes, never a body, a header or a credential. A listener that
   * throws is logged and ignored. Nothing is measured for an event nobody listens to.
   */
  on<E extends keyof PayoutsEvents>(event: E, listener: PayoutsEventListener<E>): this {
    this.events.on(event, listener);
    return this;
  }

  /** Like `on()`, for the next such event only. */
  once<E extends keyof PayoutsEvents>(event: E, listener: PayoutsEventListener<E>): this {
    this.events.once(event, listener);
    return this;
  }

  /** Removes a listener added with `on()` or `once()`. */
  off<E extends keyof PayoutsEvents>(event: E, listener: PayoutsEventListener<E>): this {
    this.events.off(event, listener);
    return this;
  }

  /**
   * In the last shutdown hook, after every module's `onModuleDestroy()`: work that drains there (a payout run's worker
   * finishing the payouts it is sending) still has the client, whatever the order the modules were imported in.
   */
  onApplicationShutdown(): void {
    this.transport.destroy();
  }
}
