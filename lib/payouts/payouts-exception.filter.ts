import { type ArgumentsHost, Catch, type ExceptionFilter, HttpStatus } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { PayoutOutcomeUnknownError } from '../errors/payout-outcome-unknown.error.js';
import { PayoutValidationError } from '../errors/payout-validation.error.js';
import { PayoutsAbortedError } from '../errors/payouts-aborted.error.js';
import { PayoutsAccessTokenError } from '../errors/payouts-access-token.error.js';
import { PayoutsApiError } from '../errors/payouts-api.error.js';
import { PayoutsNetworkError } from '../errors/payouts-network.error.js';
import { PayoutsError } from '../errors/payouts.error.js';
import { PackageLogger } from '../common/package-logger.js';

/** The HTTP reply for one of the package's errors. */
interface ErrorReply {
  status: number;
  body: Record<string, unknown>;
  /** Passed on from a `429`/`503` of the payouts API, when it said when to come back. */
  retryAfter?: string;
}

/**
 * Answers the package's errors for apps that expose payouts over HTTP, instead of Nest's `500` for an unknown
 * error. Bind it with `@UseFilters(PayoutsExceptionFilter)`, as an `APP_FILTER` provider, or with
 * `app.useGlobalFilters(new PayoutsExceptionFilter(app.get(HttpAdapterHost)))`. HTTP only.
 *
 * Bodies carry only what the caller can act on (`statusCode`, `message`, the invalid fields, the `requestId`,
 * the payouts API's status), never an error message (which names the payouts API's paths) nor a reply body.
 * Replies of 5xx are logged at error level with the error's message, which holds no secret.
 */
@Catch(PayoutsError)
export class PayoutsExceptionFilter implements ExceptionFilter<PayoutsError> {
  private readonly logger = new PackageLogger(PayoutsExceptionFilter.name);

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: PayoutsError, host: ArgumentsHost): void {
    const { status, body, retryAfter } = payoutsErrorReply(error);
    if (status >= 500) this.logger.error(`${error.name}: ${error.message}`);
    const { httpAdapter } = this.adapterHost;
    const response: unknown = host.switchToHttp().getResponse();
    if (retryAfter !== undefined) httpAdapter.setHeader(response, 'Retry-After', retryAfter);
    httpAdapter.reply(response, body, status);
  }
}

/** What each error means to the app's own caller. */
function payoutsErrorReply(error: PayoutsError): ErrorReply {
  const reply = (status: number, message: string, extra: Record<string, unknown> = {}): ErrorReply => ({
    status,
    body: { statusCode: status, message, ...extra },
  });
  // Every error about a call names it by the caller's own request_id, when there is one.
  const requestId: Record<string, string> =
    'requestId' in error && typeof error.requestId === 'string' ? { requestId: error.requestId } : {};

  if (error instanceof PayoutValidationError) {
    return reply(HttpStatus.BAD_REQUEST, 'Invalid payout request', { errors: error.errors });
  }
  if (error instanceof PayoutOutcomeUnknownError) {
    const message =
      'No complete reply from the payouts API: the payout may exist. Check its outcome before trying again.';
    const status = error.code === 'ETIMEDOUT' ? HttpStatus.GATEWAY_TIMEOUT : HttpStatus.BAD_GATEWAY;
    return reply(status, message, requestId);
  }
  if (error instanceof PayoutsApiError) return apiErrorReply(error, requestId);
  if (error instanceof PayoutsNetworkError) {
    return reply(HttpStatus.SERVICE_UNAVAILABLE, 'The payouts API cannot be reached; nothing was sent', requestId);
  }
  if (error instanceof PayoutsAccessTokenError) {
    return reply(HttpStatus.SERVICE_UNAVAILABLE, 'No access token for the payouts API; nothing was sent', requestId);
  }
  if (error instanceof PayoutsAbortedError) {
    return reply(HttpStatus.SERVICE_UNAVAILABLE, 'The request was aborted before it was processed', requestId);
  }
  // Configuration and programming mistakes: nothing the caller can do.
  return reply(HttpStatus.INTERNAL_SERVER_ERROR, 'Internal server error');
}

function apiErrorReply(error: PayoutsApiError, requestId: Record<string, string>): ErrorReply {
  const details = { ...requestId, upstreamStatus: error.status };
  const reply = (status: number, message: string): ErrorReply => ({
    status,
    body: { statusCode: status, message, ...details },
  });
  switch (error.status) {
    case 429:
    case 503: {
      const retryAfter = error.headers['retry-after'];
      const busy = reply(
        HttpStatus.SERVICE_UNAVAILABLE,
        'The payouts API is busy; nothing was processed, try again later',
      );
      // Only a well-formed value (delay-seconds or an HTTP date) is passed on.
      return retryAfter !== undefined && /^[\w ,:]+$/.test(retryAfter) ? { ...busy, retryAfter } : busy;
    }
    case 400:
    case 422:
      return reply(HttpStatus.UNPROCESSABLE_ENTITY, 'The payouts API refused the payout request');
    case 409:
      return reply(HttpStatus.CONFLICT, 'The payouts API reports a conflict with an earlier request');
    default:
      // Its credentials refused, an unknown address, a redirect, a server error: the app's problem, not the caller's.
      return reply(HttpStatus.BAD_GATEWAY, 'The payouts API answered with an error');
  }
}
