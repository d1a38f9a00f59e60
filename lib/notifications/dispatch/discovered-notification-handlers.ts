import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { NOTIFICATIONS_CONFIG } from '../../payouts.constants.js';
import type { NotificationsConfig } from '../notifications-config.js';
import type { NotificationHandler, NotificationHandlerTable } from './notification-handler-table.js';
import { NotificationHandlersExplorer } from './notification-handlers.explorer.js';

const NONE: readonly NotificationHandler[] = [];

/**
 * The registration's handlers, discovered once while the module initialises, for whichever dispatcher runs them:
 * the inline one on the route, or a queue's workers.
 */
@Injectable()
export class DiscoveredNotificationHandlers implements OnModuleInit {
  private table: NotificationHandlerTable | undefined;

  constructor(
    @Inject(NOTIFICATIONS_CONFIG) private readonly config: NotificationsConfig | false,
    @Inject(NotificationHandlersExplorer) private readonly explorer: NotificationHandlersExplorer,
  ) {}

  onModuleInit(): void {
    if (this.config) this.table = this.explorer.explore(this.config.dispatcher?.runsHandlers !== false);
  }

  /** The handlers of `eventType`, catch-all handlers included; none before discovery or with notifications off. */
  forEvent(eventType: string): readonly NotificationHandler[] {
    return this.table ? this.table.forEvent(eventType) : NONE;
  }
}
