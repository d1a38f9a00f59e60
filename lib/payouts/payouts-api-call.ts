import { optionKeys, unknownKey } from '../common/known-option-keys.js';
import { isTimerDelay, timerDelayExpected } from '../common/timer-delay.js';
import { PayoutsCallOptionsError } from '../errors/payouts-call-options.error.js';
import type { PayoutsCallTarget } from '../errors/payouts-call-target.js';
import type { PayoutsCallOperation } from '../interfaces/payouts-instrumentation.interface.js';
import type { PayoutsClientConfig } from './payouts-client-config.js';
import { checkExtraHeaders } from './extra-headers.js';
import type { PayoutsApiMethod, PayoutsApiRequest } from './payouts-api-request.interface.js';
import type { PayoutsCallOptions } from './payouts-call-options.interface.js';

/** One call to the payouts API, checked and ready to send as often as the retry rules allow. */
export interface PayoutsApiCall {
  /** Which method of `PayoutsService` made it, for the instrumentation. */
  readonly operation: PayoutsCallOperation;
  readonly method: string;
  /** Absolute, query string included. */
  readonly url: string;
  /** Serialised once, so every attempt carries the very same bytes; undefined for no body. */
  readonly body: string | undefined;
  readonly requestId: string | undefined;
  /** Method and path (no query), as logs and errors name the call. */
  readonly target: Required<PayoutsCallTarget>;
  /** GET, HEAD and OPTIONS change nothing, so one whose reply was lost may be sent again. */
  readonly safe: boolean;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** The module's and the call's extra headers, names in lowercase. */
  readonly headers: Readonly<Record<string, string>>;
}

const METHODS: ReadonlySet<string> = new Set<PayoutsApiMethod>([
  'GET',
  'HEAD',
  'OPTIONS',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
]);
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

const CALL_OPTION_KEYS = optionKeys<PayoutsCallOptions>()('timeoutMs', 'signal', 'headers');
const REQUEST_KEYS = optionKeys<PayoutsApiRequest>()(
  'method',
  'path',
  'params',
  'query',
  'body',
  'requestId',
  'timeoutMs',
  'signal',
  'headers',
);

/**
 * The per-call options, checked, over the module's defaults; a bad one rejects with `PayoutsCallOptionsError`, and so
 * does a name that is not one of `known` (a typo, or an axios option such as `maxRedirects`, would go unheeded).
 */
export function callSettings(
  config: PayoutsClientConfig,
  options: PayoutsCallOptions | undefined,
  known: readonly string[] = CALL_OPTION_KEYS,
): Pick<PayoutsApiCall, 'timeoutMs' | 'signal' | 'headers'> {
  if (options === undefined) {
    return { timeoutMs: config.timeoutMs, signal: undefined, headers: config.transport.headers };
  }
  if (typeof options !== 'object' || options === null) {
    throw new PayoutsCallOptionsError('options', 'an object of call options');
  }
  const unknown = unknownKey(options, known);
  if (unknown) throw new PayoutsCallOptionsError(unknown.key, unknown.expected);
  const { timeoutMs = config.timeoutMs, signal, headers } = options;
  if (!isTimerDelay(timeoutMs, 1)) throw new PayoutsCallOptionsError('timeoutMs', timerDelayExpected(1));
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new PayoutsCallOptionsError('signal', 'an AbortSignal');
  }
  if (headers === undefined) return { timeoutMs, signal, headers: config.transport.headers };
  const checked = checkExtraHeaders(headers, 'headers');
  if ('option' in checked) throw new PayoutsCallOptionsError(checked.option, checked.expected);
  return { timeoutMs, signal, headers: { ...config.transport.headers, ...checked.headers } };
}

/** A `request()` call: the method checked, the path filled in below the base URL, the body serialised. */
export function requestCall(config: PayoutsClientConfig, request: PayoutsApiRequest): PayoutsApiCall {
  if (typeof request !== 'object' || request === null) {
    throw new PayoutsCallOptionsError('request', 'an object with method and path');
  }
  const settings = callSettings(config, request, REQUEST_KEYS);
  const { method, requestId } = request;
  if (typeof method !== 'string' || !METHODS.has(method)) {
    throw new PayoutsCallOptionsError('method', `one of ${[...METHODS].join(', ')}`);
  }
  if (requestId !== undefined && (typeof requestId !== 'string' || requestId.trim() === '')) {
    throw new PayoutsCallOptionsError('requestId', 'a non-blank string');
  }
  const url = urlBelowBase(config.baseUrl, filledPath(request.path, request.params), queryString(request.query));
  return {
    operation: 'request',
    method,
    url: url.href,
    body: serialisedBody(request.body),
    requestId,
    target: { method, path: url.pathname },
    safe: SAFE_METHODS.has(method),
    ...settings,
  };
}

/**
 * The URL exactly as it goes on the wire (the URL parser resolves dot segments, in any spelling, before sending), if
 * it has the base URL's origin and stays below its path; otherwise nothing is sent, since the credentials go with it.
 */
function urlBelowBase(baseUrl: string, path: string, query: string): URL {
  const base = new URL(baseUrl);
  const url = new URL(`${baseUrl}${path}${query}`);
  const below = base.pathname === '/' ? '/' : `${base.pathname}/`;
  if (url.origin !== base.origin || !url.pathname.startsWith(below)) {
    throw new PayoutsCallOptionsError('path', 'a path that stays below baseUrl once the URL is resolved');
  }
  return url;
}

/** Whether a path segment is `.` or `..` as the URL parser reads it: `%2e` is a dot too, in either case. */
const isDotSegment = (segment: string): boolean => ['.', '..'].includes(segment.replace(/%2e/gi, '.'));

/** `/payouts/{id}` with `{ id: 'po 1' }` gives `/payouts/po%201`; every placeholder needs a value, every value a place. */
function filledPath(template: unknown, params: Record<string, string | number> = {}): string {
  if (typeof template !== 'string' || !/^\/[^?#]*$/.test(template)) {
    throw new PayoutsCallOptionsError('path', 'a path starting with "/", without a query string or fragment');
  }
  // The URL parser drops tabs, line breaks and a trailing space, and reads "\" as "/": the path sent would not be the
  // one written, and ".\t." or a last segment ".. " would become "..".
  if (/[\\\s\p{Cc}]/u.test(template)) {
    throw new PayoutsCallOptionsError(
      'path',
      'a path without backslashes, spaces or control characters (such text goes in params, which are encoded)',
    );
  }
  if (template.split('/').some(isDotSegment)) {
    throw new PayoutsCallOptionsError(
      'path',
      'a path without "." or ".." segments (also spelt %2e), which would leave the base URL',
    );
  }
  if (typeof params !== 'object' || params === null) throw new PayoutsCallOptionsError('params', 'an object');
  const used = new Set<string>();
  const path = template.replace(/\{([^{}/]*)\}/g, (_placeholder, name: string) => {
    const value: unknown = Object.prototype.hasOwnProperty.call(params, name) ? params[name] : undefined;
    if ((typeof value !== 'string' || value === '') && typeof value !== 'number') {
      throw new PayoutsCallOptionsError(`params.${name}`, 'a non-empty string or a number for the path placeholder');
    }
    // Percent-encoding leaves dots alone, so "." and ".." would move the path up a level.
    if (isDotSegment(String(value))) {
      throw new PayoutsCallOptionsError(`params.${name}`, 'a value other than "." or ".." (also spelt %2e)');
    }
    used.add(name);
    return encodeURIComponent(String(value));
  });
  const unused = Object.keys(params).find((name) => !used.has(name));
  if (unused !== undefined) throw new PayoutsCallOptionsError(`params.${unused}`, 'a matching {placeholder} in path');
  return path;
}

function queryString(query: PayoutsApiRequest['query']): string {
  if (query === undefined) return '';
  if (typeof query !== 'object' || query === null) throw new PayoutsCallOptionsError('query', 'an object');
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined) continue;
      if (!['string', 'number', 'boolean'].includes(typeof item)) {
        throw new PayoutsCallOptionsError(`query.${name}`, 'a string, number or boolean, or an array of them');
      }
      search.append(name, String(item));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function serialisedBody(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(body);
  } catch {
    text = undefined;
  }
  if (text === undefined) throw new PayoutsCallOptionsError('body', 'a value JSON can represent');
  return text;
}
