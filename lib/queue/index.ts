export { payoutsQueue } from './payouts-queue.js';
export type { PayoutsQueueOptions } from './payouts-queue-options.js';
export { getPayoutsQueueToken, InjectPayoutsQueue } from './payouts-queue.token.js';
export { notificationsQueueName } from './notifications-queue-name.js';
export { notificationJobId, type NotificationJobData } from './notification-job.js';
export {
  type FailedNotification,
  listFailedNotifications,
  replayFailedNotification,
  replayFailedNotifications,
  type ReplayOutcome,
} from './dead-letters.js';
