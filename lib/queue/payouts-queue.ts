import { type NotificationDispatcherFactory, PayoutsConfigError } from '../index.js';
import { isConnectionOptions, missingBullMqPeer } from '../common/bullmq-peers.js';
import { notificationsQueueName } from './notifications-queue-name.js';
import { type PayoutsQueueOptions, QUEUE_OWNER, resolvePayoutsQueueOptions } from './payouts-queue-options.js';

/**
 * Queue mode, for `notifications.dispatcher`: the route stores each notification in a BullMQ queue on Redis and
 * acknowledges it once stored; workers run the handlers, with retries. Its options, and the packages it needs, are
 * checked here, at bootstrap.
 *
 * `PayoutsModule.forRoot({ …, notifications: { verification, dispatcher: payoutsQueue({ connection }) } })`
 */
export function payoutsQueue(options: PayoutsQueueOptions): NotificationDispatcherFactory {
  const config = resolvePayoutsQueueOptions(options);
  const missing = missingBullMqPeer(isConnectionOptions(config.connection));
  if (missing === 'bullmq') {
    throw new PayoutsConfigError(
      'notifications.dispatcher',
      'payoutsQueue() with the bullmq package installed (npm install bullmq)',
    );
  }
  if (missing === 'ioredis') {
    throw new PayoutsConfigError(
      'connection',
      'connection options with the ioredis package installed, with which bullmq 6 opens its connections ' +
        '(npm install ioredis), or a client of your own',
      QUEUE_OWNER,
    );
  }
  const queueNameOf = (account: string) => config.queueName ?? notificationsQueueName(account);
  return {
    route: config.route,
    runsHandlers: config.worker,
    storageOf: (account) => `BullMQ queue ${config.prefix ?? 'bull'}:${queueNameOf(account)}`,
    create: async (host) => {
      // Loaded here rather than by this entry point, which then loads without bullmq and can say what to install.
      const { QueueNotificationDispatcher } = await import('./queue-notification-dispatcher.js');
      return new QueueNotificationDispatcher(host, config, queueNameOf(host.account));
    },
  };
}
