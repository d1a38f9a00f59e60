import { Controller, type Type } from '@nestjs/common';
import type { NotificationsConfig } from './notifications-config.js';

export function createNotificationsController(): Type<unknown> {
  return class PayoutsNotificationsController {};
}

export function bindNotificationsRoute(controller: Type<unknown>, config: NotificationsConfig | false): void {
  Controller(config ? config.path : '')(controller);
}
