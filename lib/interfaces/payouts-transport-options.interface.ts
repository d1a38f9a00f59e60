import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { AxiosProxyConfig } from 'axios';

/**
 * How requests reach the payouts API, named as in `HttpModule.register()`. Redirects are never followed whatever
 * is set here: a redirect would carry the API key and token to another address.
 */
export interface PayoutsTransportOptions {
  /**
   * Agent for an `http://` base URL: keep-alive and socket limits. Default: a keep-alive agent the module owns and
   * closes on shutdown; an agent you pass stays yours to close.
   */
  httpAgent?: HttpAgent;
  /**
   * Agent for an `https://` base URL: keep-alive, TLS client certificates (`cert` and `key`, or `pfx`), a custom CA
   * (`ca`). Default: a keep-alive agent the module owns and closes on shutdown; an agent you pass stays yours.
   */
  httpsAgent?: HttpsAgent;
  /**
   * A proxy (`{ protocol, host, port, auth }`), or `false` for none. Default: axios's own, the `HTTP_PROXY` /
   * `HTTPS_PROXY` / `NO_PROXY` environment variables. An `https://` API is reached through the proxy by `CONNECT`,
   * so the proxy sees neither the credentials nor the bodies.
   */
  proxy?: AxiosProxyConfig | false;
  /**
   * Headers sent with every request, such as a tenant or correlation header. They cannot set the credential headers
   * or those the module needs (`X-API-Key`, `Authorization`, `Content-Type`, `Accept-Encoding`, …), in any case and
   * with `_` for `-` (`x_api_key`); `User-Agent` and `Accept` may be replaced.
   */
  headers?: Record<string, string>;
}
