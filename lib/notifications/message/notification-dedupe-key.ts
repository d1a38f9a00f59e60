import type { PaymentMethodNotification } from './payment-method-notification.js';

/**
 * Identifies a notification across the service's re-sends: same event, shopper, payment method and time.
 * Parts are URI-encoded so that no id can contain the separator.
 */
export function notificationDedupeKey(notification: PaymentMethodNotification): string {
  const { eventType, shopper, paymentMethod, timestamp } = notification;
  return `${encodeURIComponent(eventType)}:${encodeURIComponent(shopper.id)}:${encodeURIComponent(paymentMethod.id)}:${encodeURIComponent(timestamp)}`;
}
