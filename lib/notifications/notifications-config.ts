import type { NotificationsOptions } from './notifications-options.interface.js';

export type NotificationsConfig = Required<Pick<NotificationsOptions, 'path'>>;

export function resolveNotificationsConfig(options: NotificationsOptions | false | undefined): NotificationsConfig | false {
  return options ? { path: options.path ?? 'payouts/notifications' } : false;
}
