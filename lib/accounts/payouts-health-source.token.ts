import type { PayoutsHealthComponent } from '../interfaces/payouts-health-source.interface.js';
import { DEFAULT_PAYOUTS_ACCOUNT } from '../payouts.constants.js';

/**
 * The injection token of the `PayoutsHealthSource` of an account's `component` (`null` when the account has none):
 * `PayoutsModule` provides the dedupe store's and the notification queue's, `PayoutRunsModule` the payout runs'.
 */
export function getPayoutsHealthSourceToken(
  component: PayoutsHealthComponent,
  account: string = DEFAULT_PAYOUTS_ACCOUNT,
): string {
  return `PayoutsHealthSource:${component}:${account}`;
}
