import { isTimerDelay, timerDelayExpected } from '../../common/timer-delay.js';

/**
 * What the mock payouts API does instead of answering a request as the real API would. Build one with the
 * {@link MockFault} functions and switch it on with `MockPayoutsApi.fail()`.
 */
export type MockFault =
  | { readonly kind: 'status'; readonly status: number; readonly body: unknown; readonly headers: MockHeaders }
  | { readonly kind: 'latency'; readonly ms: number; readonly next: MockFault | undefined }
  | { readonly kind: 'reset-before-commit' }
  | { readonly kind: 'reset-after-commit' }
  | { readonly kind: 'malformed-reply' }
  | { readonly kind: 'token-expired' };

/** Reply headers, by lower-case name. */
export type MockHeaders = Readonly<Record<string, string>>;

/** The name of a fault, as the mock's record of calls gives it. */
export type MockFaultKind = MockFault['kind'];

/** `Retry-After` as the API sends it: whole seconds, or an HTTP date. */
export type RetryAfter = number | string;

/** The faults the mock payouts API can play. Each returns a value to pass to `MockPayoutsApi.fail()`. */
export const MockFault = {
  /**
   * Replies with `status` and `body` (sent as JSON, a string as is), without handling the request: no payout is
   * created, whatever the status says.
   */
  status(status: number, body: unknown = { error: `http_${status}` }, headers: MockHeaders = {}): MockFault {
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new RangeError(`MockFault.status(): the status must be a whole number from 200 to 599; got ${status}`);
    }
    return { kind: 'status', status, body, headers: lowerCaseNames(headers) };
  },

  /** `429 Too Many Requests` with `Retry-After` (default 1 second); nothing is created. */
  rateLimited(retryAfter: RetryAfter = 1): MockFault {
    return MockFault.status(429, { error: 'rate_limited' }, { 'retry-after': String(retryAfter) });
  },

  /** `503 Service Unavailable` with `Retry-After` (default 1 second); nothing is created. */
  unavailable(retryAfter: RetryAfter = 1): MockFault {
    return MockFault.status(503, { error: 'service_unavailable' }, { 'retry-after': String(retryAfter) });
  },

  /** Waits `ms` milliseconds, then plays `next`, or answers as usual when it is left out. */
  latency(ms: number, next?: MockFault): MockFault {
    if (!isTimerDelay(ms, 0)) {
      throw new RangeError(`MockFault.latency(): the delay must be ${timerDelayExpected(0)}; got ${ms}`);
    }
    return { kind: 'latency', ms, next };
  },

  /**
   * Resets the connection once the request has arrived, without handling it: no payout is created, and the client
   * cannot know that (to the client it is the same as {@link MockFault.resetAfterCommit}).
   */
  resetBeforeCommit(): MockFault {
    return { kind: 'reset-before-commit' };
  },

  /**
   * Handles the request as usual (a valid payout is created), then resets the connection instead of replying: the
   * payout exists, and the client cannot know it.
   */
  resetAfterCommit(): MockFault {
    return { kind: 'reset-after-commit' };
  },

  /**
   * Handles the request as usual (a valid payout is created), then replies with the usual status and headers and a
   * body that is not valid JSON.
   */
  malformedReply(): MockFault {
    return { kind: 'malformed-reply' };
  },

  /**
   * `401` with `WWW-Authenticate: Bearer error="invalid_token"`, as an API answers an access token that has just
   * expired; nothing is created. Switch it on with `{ times: 1 }` for a token that expires once: a client that fetches
   * a fresh token and sends again is answered as usual.
   */
  tokenExpired(): MockFault {
    return { kind: 'token-expired' };
  },
} as const;

function lowerCaseNames(headers: MockHeaders): MockHeaders {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
