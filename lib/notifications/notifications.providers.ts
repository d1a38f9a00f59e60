import type { Provider } from '@nestjs/common';
import { NotificationHandlersExplorer } from './notification-handlers.explorer.js';
import { NotificationReceiver } from './notification-receiver.js';

export const NOTIFICATIONS_PROVIDERS: Provider[] = [NotificationHandlersExplorer, NotificationReceiver];
