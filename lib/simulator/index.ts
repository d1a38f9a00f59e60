export { deliver, type DeliveryAttempt, type DeliveryOptions, type DeliveryReport } from './deliver-notification.js';
export type { DeliveryClock } from './delivery-clock.js';
export type { NoReplyError } from './post-notification.js';
export { type RawNotification, rawNotification } from './raw-notification.js';
export {
  type NotificationOverrides,
  paymentMethodAddedNotification,
  paymentMethodNotification,
  paymentMethodRemovedNotification,
  type SimulatedCard,
  type SimulatedNotification,
  type SimulatedPaymentMethod,
  type SimulatedShopper,
} from './simulated-notification.js';
