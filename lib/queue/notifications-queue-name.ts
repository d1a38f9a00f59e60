import { DEFAULT_PAYOUTS_ACCOUNT } from '../index.js';

/** The queue of an account, unless `queueName` is given: one per account, which its handlers alone work on. */
export function notificationsQueueName(account: string = DEFAULT_PAYOUTS_ACCOUNT): string {
  return account === DEFAULT_PAYOUTS_ACCOUNT ? 'payouts-notifications' : `payouts-notifications-${account}`;
}
