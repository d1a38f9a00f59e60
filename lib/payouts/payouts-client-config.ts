import { ConfigProblems } from '../common/config-problems.js';
import { parseHttpUrl } from '../common/http-url.js';
import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { RedactedSecret } from '../common/redacted-secret.js';
import { timerDelayOption } from '../common/timer-delay.js';
import { wholeNumberOption } from '../common/whole-number-option.js';
import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import type {
  AccessTokenSource,
  PayoutsModuleOptions,
  PayoutsRetryOptions,
} from '../interfaces/payouts-module-options.interface.js';
import { isHeaderSafeCredential } from './header-safe-credential.js';
import { type PayoutsTransportConfig, resolveTransportConfig } from './transport-config.js';

/** The payouts client's options after validation, with every default filled in. */
export interface PayoutsClientConfig {
  /** The base URL without a trailing slash; `request()` paths go below it. */
  readonly baseUrl: string;
  /** Absolute URL of the create-payout endpoint. */
  readonly payoutsUrl: string;
  readonly apiKey: RedactedSecret;
  /** A fixed token, or the user's function that fetches one. */
  readonly accessToken: RedactedSecret | (() => string | Promise<string>);
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly retry: Readonly<Required<PayoutsRetryOptions>>;
  readonly transport: PayoutsTransportConfig;
}

/** The top-level options this slice reads; `config/` adds the other slices' keys to check the whole object. */
export const PAYOUTS_CLIENT_OPTION_KEYS = optionKeys<Omit<PayoutsModuleOptions, 'notifications' | 'telemetry'>>()(
  'baseUrl',
  'apiKey',
  'accessToken',
  'timeoutMs',
  'maxResponseBytes',
  'retries',
  'httpAgent',
  'httpsAgent',
  'proxy',
  'headers',
);
const RETRY_OPTION_KEYS = optionKeys<PayoutsRetryOptions>()('maxRetries', 'baseDelayMs', 'maxDelayMs', 'retryOnStatus');

const RETRY_DEFAULTS: Required<PayoutsRetryOptions> = {
  maxRetries: 2,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  retryOnStatus: [429, 503],
};

/** Validates the client's options once, at bootstrap, so a bad value fails the app before any request. */
export function resolvePayoutsClientConfig(options: PayoutsModuleOptions): PayoutsClientConfig {
  // Every option is checked, so that one error names all that are wrong.
  const problems = new ConfigProblems(options, PAYOUTS_CLIENT_OPTION_KEYS);
  const baseUrl = problems.check(() => resolveBaseUrl(options.baseUrl));
  const config: PayoutsClientConfig = {
    baseUrl,
    payoutsUrl: `${baseUrl}/payouts`,
    apiKey: problems.check(() => new RedactedSecret(requireSecret('apiKey', options.apiKey))),
    accessToken: problems.check(() => resolveAccessToken(options.accessToken)),
    timeoutMs: problems.check(() => timerDelayOption('timeoutMs', options.timeoutMs, 30_000, 1)),
    maxResponseBytes: problems.check(() =>
      wholeNumberOption('maxResponseBytes', options.maxResponseBytes, 1_048_576, 1, 'bytes'),
    ),
    retry: problems.check(() => resolveRetry(options.retries)),
    transport: problems.check(() => resolveTransportConfig(options)),
  };
  problems.throwIfAny();
  return config;
}

function resolveBaseUrl(baseUrl: unknown): string {
  const url = parseHttpUrl(baseUrl);
  if (!url) {
    throw new PayoutsConfigError('baseUrl', 'an absolute http:// or https:// URL such as "https://api.example.com/v1"');
  }
  if (url.search || url.hash) {
    throw new PayoutsConfigError('baseUrl', 'a URL without a query string or fragment');
  }
  if (url.username || url.password) {
    throw new PayoutsConfigError(
      'baseUrl',
      'a URL without user name or password (credentials go in apiKey and accessToken)',
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function requireSecret(option: string, value: unknown, expected = 'a non-empty string without spaces'): string {
  if (!isHeaderSafeCredential(value)) {
    throw new PayoutsConfigError(option, expected);
  }
  return value;
}

function resolveAccessToken(value: AccessTokenSource | undefined): PayoutsClientConfig['accessToken'] {
  if (typeof value === 'function') {
    return value;
  }
  // The scheme pasted with the token, as an env file or a curl command has it: the client adds it itself.
  if (typeof value === 'string' && /^\s*bearer\s/i.test(value)) {
    throw new PayoutsConfigError(
      'accessToken',
      'the token alone: drop the "Bearer " in front of it, the client adds it to the Authorization header',
    );
  }
  return new RedactedSecret(
    requireSecret('accessToken', value, 'a non-empty string without spaces, or a function returning one'),
  );
}

function resolveRetry(retries: PayoutsModuleOptions['retries']): Required<PayoutsRetryOptions> {
  if (retries === undefined) {
    return RETRY_DEFAULTS;
  }
  const options = typeof retries === 'number' ? { maxRetries: retries } : retries;
  if (options === null || typeof options !== 'object') {
    throw new PayoutsConfigError('retries', 'a number of retries or an object of retry options');
  }
  rejectUnknownKeys(options, RETRY_OPTION_KEYS, 'retries');
  const retryOnStatus = options.retryOnStatus ?? RETRY_DEFAULTS.retryOnStatus;
  if (
    !Array.isArray(retryOnStatus) ||
    !retryOnStatus.every((status) => Number.isInteger(status) && status >= 400 && status <= 599)
  ) {
    throw new PayoutsConfigError('retries.retryOnStatus', 'an array of HTTP error statuses (400-599)');
  }
  return {
    maxRetries: wholeNumberOption('retries.maxRetries', options.maxRetries, RETRY_DEFAULTS.maxRetries, 0),
    baseDelayMs: wholeNumberOption('retries.baseDelayMs', options.baseDelayMs, RETRY_DEFAULTS.baseDelayMs, 0),
    maxDelayMs: timerDelayOption('retries.maxDelayMs', options.maxDelayMs, RETRY_DEFAULTS.maxDelayMs, 0),
    retryOnStatus: [...retryOnStatus],
  };
}
