import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { HttpService } from '@nestjs/axios';
import { PAYOUTS_CONFIG } from '../payouts.constants.js';
import type { PayoutsConfig } from '../payouts-config.js';
import { AccessTokenProvider } from './access-token-provider.js';
import type { CreatePayoutRequest } from './create-payout-request.interface.js';
import { validatePayoutRequest } from './payout-request-validator.js';
import type { PayoutResult } from './payout-result.interface.js';
import { isJsonObject, replyBody } from './payout-reply.js';
import { PayoutsApiClient } from './payouts-api-client.js';
import { PayoutsApiTransport } from './payouts-api-transport.js';

/** Creates payouts on the payouts API: validates, sends, and retries only what surely was not processed. */
@Injectable()
export class PayoutsService implements OnModuleDestroy {
  private readonly transport: PayoutsApiTransport;
  private readonly client: PayoutsApiClient;

  constructor(
    http: HttpService,
    @Inject(PAYOUTS_CONFIG) private readonly config: PayoutsConfig,
  ) {
    this.transport = new PayoutsApiTransport(http.axiosRef);
    this.client = new PayoutsApiClient(
      config,
      this.transport,
      new AccessTokenProvider(config.accessToken),
      new Logger(PayoutsService.name),
    );
  }

  /**
   * Sends `POST {baseUrl}/payouts` and resolves with the 2xx reply.
   * Rejects with `PayoutValidationError` (nothing sent), `PayoutsApiError`, `PayoutsNetworkError`,
   * `PayoutOutcomeUnknownError` or `PayoutsAccessTokenError`. Settles within
   * (maxRetries + 2) × timeoutMs + maxRetries × maxDelayMs (see the README's "Input limits").
   */
  async createPayout(request: CreatePayoutRequest): Promise<PayoutResult> {
    await validatePayoutRequest(request);
    const reply = await this.client.send({
      method: 'POST',
      url: this.config.payoutsUrl,
      body: JSON.stringify(request),
      requestId: request.request_id,
    });
    const parsed = replyBody(reply.text);
    return { status: reply.status, headers: reply.headers, body: isJsonObject(parsed) ? parsed : {} };
  }

  onModuleDestroy(): void {
    this.transport.destroy();
  }
}
