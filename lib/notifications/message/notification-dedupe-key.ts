import { DEFAULT_PAYOUTS_ACCOUNT } from '../../payouts.constants.js';
import type { PaymentMethodNotification } from './payment-method-notification.js';

/**
 * Identifies a notification across the service's re-sends: same event, shopper, payment method and time.
 * Parts are URI-encoded so that no id can contain the separator. A named account prefixes its keys with `<account>/`
 * (account names have no `/`, encoded parts neither), so that one store shared by several accounts keeps them apart,
 * while the unnamed account keeps the keys it always had.
 */
export function notificationDedupeKey(
  notification: PaymentMethodNotification,
  account: string = DEFAULT_PAYOUTS_ACCOUNT,
): string {
  const { eventType, shopper, paymentMethod, timestamp } = notification;
  const key = `${encodeURIComponent(eventType)}:${encodeURIComponent(shopper.id)}:${encodeURIComponent(paymentMethod.id)}:${encodeURIComponent(timestamp)}`;
  return account === DEFAULT_PAYOUTS_ACCOUNT ? key : `${account}/${key}`;
}
