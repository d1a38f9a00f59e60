import { setTimeout as sleep } from 'node:timers/promises';
import { PayoutOutcomeUnknownError } from '../errors/payout-outcome-unknown.error.js';
import { PayoutsAbortedError } from '../errors/payouts-aborted.error.js';
import { PayoutsApiError } from '../errors/payouts-api.error.js';
import { callSubject, type PayoutsCallTarget } from '../errors/payouts-call-target.js';
import { PayoutsNetworkError } from '../errors/payouts-network.error.js';
import type { PayoutsCallTrace, PayoutsInstrumentation } from '../interfaces/payouts-instrumentation.interface.js';
import type { PayoutsClientConfig } from './payouts-client-config.js';
import type { AccessTokenProvider, TokenRequester } from './access-token-provider.js';
import { AttemptDeadline } from './attempt-deadline.js';
import { authorizationSecrets, CredentialRedactor } from './credential-redactor.js';
import { errorReplyBody } from './error-reply-body.js';
import type { PayoutsApiCall } from './payouts-api-call.js';
import { replyText } from './payout-reply.js';
import type { ApiReply, PayoutsApiTransport } from './payouts-api-transport.js';
import { PAYOUTS_USER_AGENT } from './payouts-user-agent.js';
import { retryDelayMs } from './retry-delay.js';
import { errorCode, transportFailure } from './transport-failure.js';
import type { PackageLogger } from '../common/package-logger.js';

/** A 2xx reply whose body arrived whole. */
export interface ApiSuccess {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

type AttemptOutcome =
  | { reply: ApiReply; token: string; deadline: AttemptDeadline }
  | { failure: PayoutsNetworkError | PayoutOutcomeUnknownError };

/** A call in flight: what errors and log lines name it by. */
interface Sending extends TokenRequester {
  readonly call: PayoutsApiCall;
  readonly target: Required<PayoutsCallTarget>;
  readonly subject: string;
}

/**
 * Sends calls with the credentials, a hard deadline per attempt and a size cap on replies, and retries only what
 * surely was not processed (and, for GET, HEAD and OPTIONS, a lost reply too). A call settles within
 * (maxRetries + 2) × timeoutMs + maxRetries × maxDelayMs: at most 1 + maxRetries attempts, one more after a 401
 * with a token function, and a capped wait before each retry.
 */
export class PayoutsApiClient {
  /** Redacts what is known before any call: the API key, a fixed token, a proxy password. */
  private readonly configRedactor: CredentialRedactor;

  constructor(
    private readonly config: PayoutsClientConfig,
    private readonly transport: PayoutsApiTransport,
    private readonly accessToken: AccessTokenProvider,
    private readonly logger: PackageLogger,
    private readonly instrumentation: PayoutsInstrumentation,
  ) {
    this.configRedactor = new CredentialRedactor(this.credentials(accessToken.fixed));
  }

  /**
   * Resolves with the first 2xx reply; rejects with `PayoutsApiError`, `PayoutsNetworkError`,
   * `PayoutOutcomeUnknownError`, `PayoutsAccessTokenError` or `PayoutsAbortedError`.
   */
  async send(call: PayoutsApiCall): Promise<ApiSuccess> {
    const target = { method: call.method, path: this.configRedactor.text(call.target.path) };
    const sending: Sending = {
      call,
      requestId: call.requestId,
      target,
      // A log line names a payout by its request_id alone, and any other call by its method and path.
      subject: callSubject(call.requestId, call.requestId === undefined ? target : {}),
    };
    if (call.signal?.aborted) throw new PayoutsAbortedError(call.requestId, target);
    // Before any attempt's deadline starts: the first call loads the HTTP client.
    await this.transport.ready();
    const trace = this.instrumentation.startPayoutsCall(call.operation, target, call.requestId);
    try {
      const success = await trace.run(() => this.sendAttempts(sending, trace));
      trace.end(undefined);
      return success;
    } catch (error) {
      trace.end(error instanceof Error ? error.name : typeof error);
      throw error;
    }
  }

  /** Sends attempts until one succeeds, or the retry rules say the call has failed. */
  private async sendAttempts(sending: Sending, trace: PayoutsCallTrace): Promise<ApiSuccess> {
    const { call, target } = sending;
    const { retryOnStatus } = this.config.retry;
    const { maxRetries } = call;
    let attempts = 0;
    let retries = 0;
    let rejectedToken: string | undefined;
    let tokenRefreshed = false;
    for (;;) {
      const outcome = await this.attempt(sending, rejectedToken, trace, ++attempts);
      rejectedToken = undefined;
      if ('failure' in outcome) {
        const { failure } = outcome;
        if (this.mayRetry(failure, call) && retries < maxRetries) {
          trace.attemptEnded('retrying', undefined, failure.code);
          await this.backOff(sending, retries++, failure.code, undefined);
          continue;
        }
        const ended = failure instanceof PayoutsNetworkError ? 'network_error' : 'unknown';
        trace.attemptEnded(ended, undefined, failure.code);
        throw failure;
      }
      const { reply, token, deadline } = outcome;
      const cutShort = this.bodyCutShort(reply, deadline);
      if (reply.status >= 200 && reply.status < 300) {
        if (cutShort) {
          trace.attemptEnded('unknown', reply.status, cutShort.code);
          throw new PayoutOutcomeUnknownError(call.requestId, cutShort.code, {
            ...target,
            status: reply.status,
            bodyCutShort: cutShort.description,
          });
        }
        trace.attemptEnded('succeeded', reply.status, undefined);
        return { status: reply.status, headers: reply.headers, text: replyText(reply.body.bytes) };
      }
      if (reply.status === 401 && this.accessToken.refreshable && !tokenRefreshed) {
        trace.attemptEnded('retrying', reply.status, undefined);
        tokenRefreshed = true;
        rejectedToken = token;
        this.logger.warn(`${sending.subject}: HTTP 401, sending again with a fresh access token`);
        continue;
      }
      if (retryOnStatus.includes(reply.status) && retries < maxRetries) {
        trace.attemptEnded('retrying', reply.status, undefined);
        await this.backOff(sending, retries++, `HTTP ${reply.status}`, reply.headers['retry-after']);
        continue;
      }
      trace.attemptEnded('rejected', reply.status, undefined);
      throw this.apiError(reply, token, sending, cutShort?.description);
    }
  }

  /**
   * One attempt under its own deadline, which covers the access token (a fresh one after a 401), connecting,
   * sending and the whole reply. Rejects only when nothing was sent: `PayoutsAccessTokenError`, `PayoutsAbortedError`.
   */
  private async attempt(
    sending: Sending,
    rejectedToken: string | undefined,
    trace: PayoutsCallTrace,
    attempt: number,
  ): Promise<AttemptOutcome> {
    const { call, requestId, target } = sending;
    const deadline = new AttemptDeadline(call.timeoutMs, call.signal);
    try {
      const token =
        rejectedToken === undefined
          ? await this.accessToken.current(sending, deadline)
          : await this.accessToken.refreshed(rejectedToken, sending, deadline);
      if (deadline.abortedByCaller) throw new PayoutsAbortedError(requestId, target);
      trace.attemptStarted(attempt);
      try {
        const reply = await this.transport.exchange({
          method: call.method,
          url: call.url,
          headers: {
            accept: 'application/json',
            'user-agent': PAYOUTS_USER_AGENT,
            ...call.headers,
            'x-api-key': this.config.apiKey.reveal(),
            authorization: `Bearer ${token}`,
            ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: call.body,
          signal: deadline.signal,
          maxResponseBytes: this.config.maxResponseBytes,
        });
        return { reply, token, deadline };
      } catch (error) {
        if (deadline.timedOut) return { failure: new PayoutOutcomeUnknownError(requestId, 'ETIMEDOUT', target) };
        if (deadline.abortedByCaller) return { failure: new PayoutOutcomeUnknownError(requestId, 'ABORTED', target) };
        return { failure: transportFailure(error, requestId, target) };
      }
    } finally {
      deadline.clear();
    }
  }

  /** Surely not sent; or sent with a method that changes nothing, and not given up on by the caller. */
  private mayRetry(failure: PayoutsNetworkError | PayoutOutcomeUnknownError, call: PayoutsApiCall): boolean {
    return failure instanceof PayoutsNetworkError || (call.safe && failure.code !== 'ABORTED');
  }

  /** Why the reply's body is incomplete, as an error code and the words errors use; undefined when it is whole. */
  private bodyCutShort(reply: ApiReply, deadline: AttemptDeadline): { code: string; description: string } | undefined {
    const { body } = reply;
    if (body.cutShort === undefined) return undefined;
    if (body.cutShort === 'too-large') {
      return {
        code: 'RESPONSE_TOO_LARGE',
        description: `larger than maxResponseBytes (${this.config.maxResponseBytes} bytes)`,
      };
    }
    if (deadline.timedOut) return { code: 'ETIMEDOUT', description: 'not whole before the timeout' };
    if (deadline.abortedByCaller) return { code: 'ABORTED', description: "cut off by the caller's abort" };
    const code = errorCode(body.error);
    return { code, description: `cut off (${code})` };
  }

  /**
   * The rejection for a final non-2xx reply, keeping nothing of it that holds a credential sent with it (a proxy's
   * included), and no more of its body than an excerpt.
   */
  private apiError(
    reply: ApiReply,
    token: string,
    sending: Sending,
    bodyCutShort: string | undefined,
  ): PayoutsApiError {
    const redactor = new CredentialRedactor(this.credentials(token, reply.proxyAuthorization));
    const kept = errorReplyBody(replyText(reply.body.bytes), bodyCutShort === undefined, redactor);
    return new PayoutsApiError(reply.status, kept.body, sending.requestId, {
      ...sending.target,
      headers: redactor.headers(reply.headers),
      bodyCutShort,
      bodyTruncated: kept.truncated,
      bodyLength: reply.body.bytes.length,
    });
  }

  private credentials(token: string | undefined, proxyAuthorization?: string): string[] {
    const proxyPassword = this.config.transport.proxy ? this.config.transport.proxy.auth?.password : undefined;
    return [this.config.apiKey.reveal(), token, proxyPassword, ...authorizationSecrets(proxyAuthorization)].filter(
      (secret): secret is string => !!secret,
    );
  }

  /** Waits before retry number `retry`; the caller's abort ends the wait, and the call, since nothing was processed. */
  private async backOff(
    sending: Sending,
    retry: number,
    reason: string,
    retryAfter: string | undefined,
  ): Promise<void> {
    const delay = retryDelayMs(retry, this.config.retry, retryAfter);
    this.logger.warn(`${sending.subject}: ${reason}, retry ${retry + 1} of ${sending.call.maxRetries} in ${delay} ms`);
    try {
      await sleep(delay, undefined, { signal: sending.call.signal });
    } catch {
      throw new PayoutsAbortedError(sending.requestId, sending.target);
    }
  }
}
