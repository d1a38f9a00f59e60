import { randomBytes } from 'node:crypto';
import { optionKeys, rejectUnknownKeys } from '../../common/known-option-keys.js';
import { isTimerDelay, timerDelayExpected } from '../../common/timer-delay.js';
import { isWholeNumber } from '../../common/whole-number.js';
import { PayoutsConfigError } from '../../errors/payouts-config.error.js';
import { isHeaderSafeCredential } from '../../payouts/header-safe-credential.js';
import type { MockPayoutsCall } from './mock-payouts-call.js';

/** How `MockPayoutsApi.start()` runs the mock. Every option has a default. */
export interface MockPayoutsApiOptions {
  /** The port to listen on; default 0, a free port chosen by the system. */
  port?: number;
  /** The address to listen on; default `127.0.0.1`. */
  host?: string;
  /** The `X-API-Key` value the mock accepts; default a random value, read back from `apiKey`. */
  apiKey?: string;
  /**
   * The bearer token the mock accepts, or a function that says whether a token is valid (for an app that fetches its
   * tokens with a function); default a random token in JWT form, read back from `accessToken`.
   */
  accessToken?: string | ((token: string) => boolean);
  /** A wait before every answer, in milliseconds; default 0. Faults add their own. */
  latencyMs?: number;
  /** Called with each call once it has been answered (or reset), to print or log it. Its credentials are hidden. */
  onCall?: (call: MockPayoutsCall) => void;
}

export interface MockPayoutsApiSettings {
  readonly port: number;
  readonly host: string;
  readonly apiKey: string;
  readonly accessToken: string | ((token: string) => boolean);
  readonly latencyMs: number;
  readonly onCall: ((call: MockPayoutsCall) => void) | undefined;
}

const OWNER = 'MockPayoutsApi';
const OPTION_KEYS = optionKeys<MockPayoutsApiOptions>()('port', 'host', 'apiKey', 'accessToken', 'latencyMs', 'onCall');

/** The options checked, defaults filled in; a bad option fails naming it, never echoing a credential. */
export function resolveMockPayoutsApiOptions(options: MockPayoutsApiOptions): MockPayoutsApiSettings {
  rejectUnknownKeys(options, OPTION_KEYS, '', OWNER);
  const { port = 0, host = '127.0.0.1', apiKey, accessToken, latencyMs = 0, onCall } = options;
  if (!isWholeNumber(port, 0) || port > 65_535) throw new PayoutsConfigError('port', 'a port from 0 to 65535', OWNER);
  if (typeof host !== 'string' || host === '')
    throw new PayoutsConfigError('host', 'an address such as 127.0.0.1', OWNER);
  if (apiKey !== undefined && !isHeaderSafeCredential(apiKey)) {
    throw new PayoutsConfigError('apiKey', 'a non-empty string of printable characters, no spaces', OWNER);
  }
  if (accessToken !== undefined && typeof accessToken !== 'function' && !isHeaderSafeCredential(accessToken)) {
    throw new PayoutsConfigError(
      'accessToken',
      'a non-empty string of printable characters, no spaces, or a function',
      OWNER,
    );
  }
  if (!isTimerDelay(latencyMs, 0)) throw new PayoutsConfigError('latencyMs', timerDelayExpected(0), OWNER);
  if (onCall !== undefined && typeof onCall !== 'function') throw new PayoutsConfigError('onCall', 'a function', OWNER);
  return {
    port,
    host,
    apiKey: apiKey ?? `sk_test_${randomBytes(12).toString('hex')}`,
    accessToken: accessToken ?? randomJwt(),
    latencyMs,
    onCall,
  };
}

/** A token in JWT form (header.payload.signature), as the interface says the access token is. */
function randomJwt(): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const payload = { sub: 'mock-merchant', iat: Math.floor(Date.now() / 1000) };
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}.${randomBytes(32).toString('base64url')}`;
}
