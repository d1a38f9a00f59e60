import { isJsonObject } from '../../common/json-object.js';
import type { NotificationDispatcherHost } from '../../interfaces/notification-dispatcher.interface.js';
import type { PayoutsInstrumentation } from '../../interfaces/payouts-instrumentation.interface.js';
import { parsePaymentMethodNotification } from '../message/payment-method-notification.parser.js';
import type { DiscoveredNotificationHandlers } from './discovered-notification-handlers.js';

const NOT_AN_OBJECT = [{ field: '', message: 'must be a JSON object' }] as const;

/**
 * What a dispatcher factory gets of a registration: its account, the route's validation, its handlers, and its
 * instrumentation's way to continue a stored notification's trace.
 */
export function createNotificationDispatcherHost(
  account: string,
  handlers: DiscoveredNotificationHandlers,
  instrumentation: PayoutsInstrumentation,
): NotificationDispatcherHost {
  return {
    account,
    parse: (value) => (isJsonObject(value) ? parsePaymentMethodNotification(value) : { errors: NOT_AN_OBJECT }),
    handlersFor: (eventType) => handlers.forEvent(eventType),
    resumeTrace: (carrier) => instrumentation.resumeNotification(carrier),
  };
}
