import { DEFAULT_PAYOUTS_ACCOUNT } from '../payouts.constants.js';

/**
 * The injection token under which the registration named `account` exports its instrumentation (the `telemetry`
 * option's, wrapped to emit the events of its `PayoutsService`), for the add-ons that record on its behalf, such as
 * payout runs.
 */
export function getPayoutsInstrumentationToken(account: string = DEFAULT_PAYOUTS_ACCOUNT): string {
  return `PayoutsInstrumentation:${account}`;
}
