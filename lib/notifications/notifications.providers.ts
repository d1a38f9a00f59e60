import type { Provider } from '@nestjs/common';
import { NotificationHandlersExplorer } from './dispatch/notification-handlers.explorer.js';
import { NotificationReceiver } from './http/notification-receiver.js';

export const NOTIFICATIONS_PROVIDERS: Provider[] = [NotificationHandlersExplorer, NotificationReceiver];
