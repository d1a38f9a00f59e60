import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AxiosProxyConfig } from 'axios';
import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import { checkExtraHeaders } from './extra-headers.js';
import type { PayoutsTransportOptions } from '../interfaces/payouts-transport-options.interface.js';

/** The transport options after validation. */
export interface PayoutsTransportConfig {
  readonly httpAgent: HttpAgent | undefined;
  readonly httpsAgent: HttpsAgent | undefined;
  readonly proxy: AxiosProxyConfig | false | undefined;
  /** Names in lowercase. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Checks the transport options at bootstrap; a bad one fails with `PayoutsConfigError` naming it, never its value. */
export function resolveTransportConfig(options: PayoutsTransportOptions): PayoutsTransportConfig {
  // Named as in HttpModule.register(), so it is what a user would try; following redirects is never allowed.
  const { maxRedirects } = options as { maxRedirects?: unknown };
  if (maxRedirects !== undefined && maxRedirects !== 0) {
    throw new PayoutsConfigError(
      'maxRedirects',
      'nothing (or 0): redirects are never followed, since they would carry the API key and token to another address',
    );
  }
  if (options.httpAgent !== undefined && !(options.httpAgent instanceof HttpAgent)) {
    throw new PayoutsConfigError('httpAgent', 'an http.Agent');
  }
  if (options.httpsAgent !== undefined && !(options.httpsAgent instanceof HttpsAgent)) {
    throw new PayoutsConfigError('httpsAgent', 'an https.Agent');
  }
  const headers = options.headers === undefined ? { headers: {} } : checkExtraHeaders(options.headers, 'headers');
  if ('option' in headers) throw new PayoutsConfigError(headers.option, headers.expected);
  return {
    httpAgent: options.httpAgent,
    httpsAgent: options.httpsAgent,
    proxy: resolveProxy(options.proxy),
    headers: headers.headers,
  };
}

function resolveProxy(proxy: unknown): AxiosProxyConfig | false | undefined {
  if (proxy === undefined || proxy === false) return proxy;
  const expected = 'false, or { host, port } with an optional protocol ("http" or "https") and auth';
  if (typeof proxy !== 'object' || proxy === null) throw new PayoutsConfigError('proxy', expected);
  const { host, port, protocol, auth } = proxy as Partial<AxiosProxyConfig>;
  if (typeof host !== 'string' || host === '') throw new PayoutsConfigError('proxy.host', 'a host name or address');
  if (!Number.isInteger(port) || port! < 1 || port! > 65_535) {
    throw new PayoutsConfigError('proxy.port', 'a port number from 1 to 65535');
  }
  if (protocol !== undefined && !['http', 'https', 'http:', 'https:'].includes(protocol)) {
    throw new PayoutsConfigError('proxy.protocol', '"http" or "https"');
  }
  if (auth !== undefined && (typeof auth?.username !== 'string' || typeof auth.password !== 'string')) {
    throw new PayoutsConfigError('proxy.auth', '{ username, password } as strings');
  }
  return {
    host,
    port: port!,
    ...(protocol === undefined ? {} : { protocol }),
    ...(auth === undefined ? {} : { auth }),
  };
}
