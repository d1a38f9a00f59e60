import { DEFAULT_PAYOUTS_ACCOUNT } from '../index.js';

/** The queue of an account's payout runs: `payout-runs`, or `payout-runs-<name>` for a named registration. */
export function payoutRunsQueueName(account?: string): string {
  return account === undefined || account === DEFAULT_PAYOUTS_ACCOUNT ? 'payout-runs' : `payout-runs-${account}`;
}
