import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { HttpService } from '@nestjs/axios';
import { firstValueFrom } from 'rxjs';
import { PayoutsApiError } from '../errors/payouts-api.error.js';
import { PayoutsNetworkError } from '../errors/payouts-network.error.js';
import { PAYOUTS_CLIENT_CONFIG } from '../payouts.constants.js';
import { AccessTokenProvider } from './access-token-provider.js';
import type { PayoutsClientConfig } from './payouts-client-config.js';
import type { CreatePayoutRequest } from './create-payout-request.interface.js';
import { validatePayoutRequest } from './payout-request-validator.js';
import type { PayoutResult } from './payout-result.interface.js';
import { isJsonObject } from '../common/json-object.js';
import { replyBody, replyHeaders } from './payout-reply.js';
import { PAYOUTS_USER_AGENT } from './payouts-user-agent.js';
import { retryDelayMs } from './retry-delay.js';
import { transportFailure } from './transport-failure.js';

interface PayoutReply {
  status: number;
  headers: Record<string, string>;
  text: string;
}

// Built once rather than per call: the body is sent as serialised and the reply read as text, whatever the status;
// a timeout surfaces as ETIMEDOUT rather than ECONNABORTED.
const acceptAnyStatus = (): boolean => true;
const passTextThrough = [(data: string): string => data];
const clarifyTimeoutError = { clarifyTimeoutError: true };

/** Creates payouts on the payouts API: validates, sends, and retries only what surely was not processed. */
@Injectable()
export class PayoutsService implements OnModuleDestroy {
  private readonly logger = new Logger(PayoutsService.name);
  // Reused connections keep bursts of payouts from opening a socket each.
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true });
  private readonly accessToken: AccessTokenProvider;

  constructor(
    private readonly http: HttpService,
    @Inject(PAYOUTS_CLIENT_CONFIG) private readonly config: PayoutsClientConfig,
  ) {
    this.accessToken = new AccessTokenProvider(config.accessToken);
  }

  /**
   * Sends `POST {baseUrl}/payouts` and resolves with the 2xx reply.
   * Rejects with `PayoutValidationError` (nothing sent), `PayoutsApiError`, `PayoutsNetworkError`,
   * `PayoutOutcomeUnknownError` or `PayoutsAccessTokenError`.
   */
  async createPayout(request: CreatePayoutRequest): Promise<PayoutResult> {
    await validatePayoutRequest(request);
    const requestId = request.request_id;
    // Serialised once, so every attempt carries the very same body and request_id.
    const body = JSON.stringify(request);
    const { maxRetries, retryOnStatus } = this.config.retry;
    let retries = 0;
    let tokenRefreshed = false;
    for (;;) {
      const token = await this.accessToken.current(requestId);
      let reply: PayoutReply;
      try {
        reply = await this.send(body, token);
      } catch (error) {
        const failure = transportFailure(error, requestId);
        if (failure instanceof PayoutsNetworkError && retries < maxRetries) {
          await this.backOff(requestId, retries++, failure.code, undefined);
          continue;
        }
        throw failure;
      }
      if (reply.status >= 200 && reply.status < 300) {
        const parsed = replyBody(reply.text);
        return { status: reply.status, headers: reply.headers, body: isJsonObject(parsed) ? parsed : {} };
      }
      if (reply.status === 401 && this.accessToken.refreshable && !tokenRefreshed) {
        tokenRefreshed = true;
        this.logger.warn(`Payout request "${requestId}": HTTP 401, sending again with a fresh access token`);
        await this.accessToken.refresh(token, requestId);
        continue;
      }
      if (retryOnStatus.includes(reply.status) && retries < maxRetries) {
        await this.backOff(requestId, retries++, `HTTP ${reply.status}`, reply.headers['retry-after']);
        continue;
      }
      throw new PayoutsApiError(reply.status, replyBody(reply.text), requestId);
    }
  }

  onModuleDestroy(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private async send(body: string, token: string): Promise<PayoutReply> {
    const response = await firstValueFrom(
      this.http.post<string>(this.config.payoutsUrl, body, {
        headers: {
          'X-API-Key': this.config.apiKey.reveal(),
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'User-Agent': PAYOUTS_USER_AGENT,
        },
        timeout: this.config.timeoutMs,
        transitional: clarifyTimeoutError,
        httpAgent: this.httpAgent,
        httpsAgent: this.httpsAgent,
        // Following a redirect would hand the credentials to another address.
        maxRedirects: 0,
        validateStatus: acceptAnyStatus,
        transformRequest: passTextThrough,
        responseType: 'text',
        transformResponse: passTextThrough,
      }),
    );
    return {
      status: response.status,
      headers: replyHeaders(response.headers as Record<string, unknown>),
      text: typeof response.data === 'string' ? response.data : '',
    };
  }

  private async backOff(requestId: string, retry: number, reason: string, retryAfter: string | undefined): Promise<void> {
    const delay = retryDelayMs(retry, this.config.retry, retryAfter);
    this.logger.warn(
      `Payout request "${requestId}": ${reason}, retry ${retry + 1} of ${this.config.retry.maxRetries} in ${delay} ms`,
    );
    await sleep(delay);
  }
}
