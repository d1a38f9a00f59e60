import type { NotificationDispatcherFactory } from '../index.js';
import { notificationsQueueName } from './notifications-queue-name.js';
import { type PayoutsQueueOptions, resolvePayoutsQueueOptions } from './payouts-queue-options.js';
import { QueueNotificationDispatcher } from './queue-notification-dispatcher.js';

/**
 * Queue mode, for `notifications.dispatcher`: the route stores each notification in a BullMQ queue on Redis and
 * acknowledges it once stored; workers run the handlers, with retries. Its options are checked here, at bootstrap.
 *
 * `PayoutsModule.forRoot({ …, notifications: { verification, dispatcher: payoutsQueue({ connection }) } })`
 */
export function payoutsQueue(options: PayoutsQueueOptions): NotificationDispatcherFactory {
  const config = resolvePayoutsQueueOptions(options);
  return {
    route: config.route,
    create: (host) =>
      new QueueNotificationDispatcher(host, config, config.queueName ?? notificationsQueueName(host.account)),
  };
}
