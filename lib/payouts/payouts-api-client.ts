import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@nestjs/common';
import { PayoutOutcomeUnknownError } from '../errors/payout-outcome-unknown.error.js';
import { PayoutsApiError } from '../errors/payouts-api.error.js';
import { PayoutsNetworkError } from '../errors/payouts-network.error.js';
import type { PayoutsConfig } from '../payouts-config.js';
import type { AccessTokenProvider } from './access-token-provider.js';
import { AttemptDeadline } from './attempt-deadline.js';
import { CredentialRedactor } from './credential-redactor.js';
import { errorReplyBody } from './error-reply-body.js';
import { replyText } from './payout-reply.js';
import type { ApiReply, PayoutsApiTransport } from './payouts-api-transport.js';
import { PAYOUTS_USER_AGENT } from './payouts-user-agent.js';
import { retryDelayMs } from './retry-delay.js';
import { errorCode, transportFailure } from './transport-failure.js';

/** One call to the payouts API, sent as often as the retry rules allow. */
export interface PayoutsApiCall {
  readonly method: string;
  readonly url: string;
  /** Serialised once, so every attempt carries the very same bytes. */
  readonly body: string;
  /** Names the call in logs and errors. */
  readonly requestId: string;
}

/** A 2xx reply whose body arrived whole. */
export interface ApiSuccess {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

type AttemptOutcome =
  | { reply: ApiReply; token: string; expired: boolean }
  | { failure: PayoutsNetworkError | PayoutOutcomeUnknownError };

/**
 * Sends calls with the credentials, a hard deadline per attempt and a size cap on replies, and retries only what
 * surely was not processed. A call settles within (maxRetries + 2) × timeoutMs + maxRetries × maxDelayMs: at most
 * 1 + maxRetries attempts, one more after a 401 with a token function, and a capped wait before each retry.
 */
export class PayoutsApiClient {
  constructor(
    private readonly config: PayoutsConfig,
    private readonly transport: PayoutsApiTransport,
    private readonly accessToken: AccessTokenProvider,
    private readonly logger: Logger,
  ) {}

  /**
   * Resolves with the first 2xx reply; rejects with `PayoutsApiError`, `PayoutsNetworkError`,
   * `PayoutOutcomeUnknownError` or `PayoutsAccessTokenError`.
   */
  async send(call: PayoutsApiCall): Promise<ApiSuccess> {
    const { maxRetries, retryOnStatus } = this.config.retry;
    const { requestId } = call;
    let retries = 0;
    let rejectedToken: string | undefined;
    let tokenRefreshed = false;
    for (;;) {
      const outcome = await this.attempt(call, rejectedToken);
      rejectedToken = undefined;
      if ('failure' in outcome) {
        if (outcome.failure instanceof PayoutsNetworkError && retries < maxRetries) {
          await this.backOff(requestId, retries++, outcome.failure.code, undefined);
          continue;
        }
        throw outcome.failure;
      }
      const { reply, token } = outcome;
      const cutShort = this.bodyCutShort(reply, outcome.expired);
      if (reply.status >= 200 && reply.status < 300) {
        if (cutShort) throw new PayoutOutcomeUnknownError(requestId, cutShort.code, reply.status, cutShort.description);
        return { status: reply.status, headers: reply.headers, text: replyText(reply.body.bytes) };
      }
      if (reply.status === 401 && this.accessToken.refreshable && !tokenRefreshed) {
        tokenRefreshed = true;
        rejectedToken = token;
        this.logger.warn(`Payout request "${requestId}": HTTP 401, sending again with a fresh access token`);
        continue;
      }
      if (retryOnStatus.includes(reply.status) && retries < maxRetries) {
        await this.backOff(requestId, retries++, `HTTP ${reply.status}`, reply.headers['retry-after']);
        continue;
      }
      throw this.apiError(reply, token, requestId, cutShort?.description);
    }
  }

  /**
   * One attempt under its own deadline, which covers the access token (a fresh one after a 401), connecting,
   * sending and the whole reply. Rejects only with `PayoutsAccessTokenError`: nothing was sent.
   */
  private async attempt(call: PayoutsApiCall, rejectedToken: string | undefined): Promise<AttemptOutcome> {
    const { timeoutMs, apiKey, maxResponseBytes } = this.config;
    const deadline = new AttemptDeadline(timeoutMs);
    try {
      const token =
        rejectedToken === undefined
          ? await this.accessToken.current(call.requestId, deadline)
          : await this.accessToken.refreshed(rejectedToken, call.requestId, deadline);
      try {
        const reply = await this.transport.exchange({
          method: call.method,
          url: call.url,
          headers: {
            'X-API-Key': apiKey.reveal(),
            Authorization: `Bearer ${token}`,
            'Content-Type': 'application/json',
            Accept: 'application/json',
            'User-Agent': PAYOUTS_USER_AGENT,
          },
          body: call.body,
          signal: deadline.signal,
          maxResponseBytes,
        });
        return { reply, token, expired: deadline.expired };
      } catch (error) {
        return {
          failure: deadline.expired
            ? new PayoutOutcomeUnknownError(call.requestId, 'ETIMEDOUT')
            : transportFailure(error, call.requestId),
        };
      }
    } finally {
      deadline.clear();
    }
  }

  /** Why the reply's body is incomplete, as an error code and the words errors use; undefined when it is whole. */
  private bodyCutShort(reply: ApiReply, expired: boolean): { code: string; description: string } | undefined {
    const { body } = reply;
    if (body.cutShort === undefined) return undefined;
    if (body.cutShort === 'too-large') {
      return {
        code: 'RESPONSE_TOO_LARGE',
        description: `larger than maxResponseBytes (${this.config.maxResponseBytes} bytes)`,
      };
    }
    if (expired) return { code: 'ETIMEDOUT', description: 'not whole before the timeout' };
    const code = errorCode(body.error);
    return { code, description: `cut off (${code})` };
  }

  /** The rejection for a final non-2xx reply, keeping nothing of it that holds a credential sent with it. */
  private apiError(reply: ApiReply, token: string, requestId: string, bodyCutShort: string | undefined): PayoutsApiError {
    const redactor = new CredentialRedactor([this.config.apiKey.reveal(), token]);
    const body = errorReplyBody(replyText(reply.body.bytes), bodyCutShort === undefined, redactor);
    return new PayoutsApiError(reply.status, body, requestId, { headers: redactor.headers(reply.headers), bodyCutShort });
  }

  private async backOff(requestId: string, retry: number, reason: string, retryAfter: string | undefined): Promise<void> {
    const delay = retryDelayMs(retry, this.config.retry, retryAfter);
    this.logger.warn(
      `Payout request "${requestId}": ${reason}, retry ${retry + 1} of ${this.config.retry.maxRetries} in ${delay} ms`,
    );
    await sleep(delay);
  }
}
