/** What every notification server in the bench receives: the spec's PAYMENT_METHOD_ADDED sample. */

export const NOTIFICATION_PATH = '/payouts/notifications';
export const NOTIFICATION_SECRET = 'bench-notification-secret';
/** The URL the service would call: the merchant puts the secret in the configured notification URL. */
export const NOTIFICATION_PATH_WITH_TOKEN = `${NOTIFICATION_PATH}?token=${NOTIFICATION_SECRET}`;
export const ACK_BODY = '{"ResultCode":0}';

const PAYMENT_METHOD_ID_MARK = 'pmt_@';

function sampleNotification(paymentMethodId: string) {
  return {
    eventType: 'PAYMENT_METHOD_ADDED',
    timestamp: '2025-03-14T09:26:53.589Z',
    shopper: { id: 'shp_7Hq2LmX9', partner_shopper_id: 'merchant-shopper-1042', email: 'shopper@example.com' },
    paymentMethod: {
      id: paymentMethodId,
      type: 'card',
      card: { lastFour: '4242', expirationMonth: '08', expirationYear: '2029' },
    },
  };
}

const [bodyStart, bodyEnd] = JSON.stringify(sampleNotification(PAYMENT_METHOD_ID_MARK)).split(
  PAYMENT_METHOD_ID_MARK,
) as [string, string];

/** The body with a given sequence number in `paymentMethod.id`; every body has the same length. */
export function notificationBody(sequence: number): string {
  return `${bodyStart}pmt_${sequence.toString().padStart(12, '0')}${bodyEnd}`;
}

/** A body every validating route must reject (`card.lastFour` is not four digits). */
export const INVALID_NOTIFICATION_BODY = JSON.stringify({
  ...sampleNotification('pmt_invalid'),
  paymentMethod: {
    id: 'pmt_invalid',
    type: 'card',
    card: { lastFour: '42', expirationMonth: '08', expirationYear: '2029' },
  },
});

/**
 * The route's dedupe key for `notificationBody(sequence)`: URI-encoded parts joined by ':', 79 characters, or
 * `length` characters with the payment method id padded.
 */
export function sampleDedupeKey(sequence: number, length = 0): string {
  const paymentMethodId = `pmt_${sequence.toString().padStart(12, '0')}`;
  const padding = 'x'.repeat(Math.max(0, length - 79));
  return ['PAYMENT_METHOD_ADDED', 'shp_7Hq2LmX9', `${paymentMethodId}${padding}`, '2025-03-14T09:26:53.589Z']
    .map(encodeURIComponent)
    .join(':');
}
