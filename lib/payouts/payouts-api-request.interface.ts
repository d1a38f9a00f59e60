import type { PayoutsCallOptions } from './payouts-call-options.interface.js';

/** The HTTP methods `request()` sends. */
export type PayoutsApiMethod = 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A value of a query parameter; an array repeats the parameter, `undefined` leaves it out. */
export type PayoutsQueryValue = string | number | boolean | undefined | ReadonlyArray<string | number | boolean>;

/** A request to an endpoint of the payouts API that `createPayout()` does not cover. */
export interface PayoutsApiRequest extends PayoutsCallOptions {
  method: PayoutsApiMethod;
  /**
   * The path below `baseUrl`, starting with `/`, such as `/payouts/{id}`. Each `{name}` is replaced with
   * `params.name`, percent-encoded, so a value can never change the path's shape. Dot segments in any spelling
   * (`..`, `%2e%2e`, `\..\`), spaces, control characters and a `params` value `.` or `..` are refused, and the URL
   * must stay below `baseUrl` as it is sent: the credentials go wherever it leads.
   */
  path: string;
  params?: Record<string, string | number>;
  query?: Record<string, PayoutsQueryValue>;
  /** Sent as JSON (`Content-Type: application/json`); no body when absent. */
  body?: unknown;
  /**
   * Names the call in logs and errors; give the `request_id` of a payout the request creates, so that an unknown
   * outcome can be reconciled with it.
   */
  requestId?: string;
}
