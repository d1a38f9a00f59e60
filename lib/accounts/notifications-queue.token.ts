import { DEFAULT_PAYOUTS_ACCOUNT } from '../payouts.constants.js';

/**
 * The injection token under which the registration named `account` exports its dispatcher's queue (`null` when its
 * dispatcher keeps none, as the inline one). `nestjs-payouts/queue` publishes it as `getPayoutsQueueToken()`.
 */
export function getNotificationsQueueToken(account: string = DEFAULT_PAYOUTS_ACCOUNT): string {
  return `PayoutsNotificationsQueue:${account}`;
}
