import { PayoutsError } from './payouts.error.js';

/**
 * The payouts API answered with a non-2xx status (after any retries the policy allows).
 * `body` is the parsed JSON reply, or its text when it is not JSON.
 */
export class PayoutsApiError extends PayoutsError {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly requestId: string,
  ) {
    super(`Payout request "${requestId}" was rejected by the payouts API with HTTP ${status}.`);
  }
}
