import type { NotificationContext } from '../interfaces/notification-context.interface.js';
import { notificationDedupeKey } from '../notifications/message/notification-dedupe-key.js';
import type { PaymentMethodNotification } from '../notifications/message/payment-method-notification.js';
import { parsePaymentMethodNotification } from '../notifications/message/payment-method-notification.parser.js';
import { DEFAULT_PAYOUTS_ACCOUNT } from '../payouts.constants.js';

/**
 * The arguments the notification route passes a handler for `body`, for unit tests that call a
 * handler method directly: `await listener.onAdded(...notificationHandlerArgs(paymentMethodAddedNotification()))`.
 * `context` overrides fields of the context; `{ account: 'eu' }` gives what the route of the registration named
 * `'eu'` passes, its dedupe key included.
 *
 * `body` goes through JSON and the route's own parsing, so the handler sees what it would in production.
 * Throws a `TypeError` naming the fields when the route would reject `body` with 400 and run no handler.
 */
export function notificationHandlerArgs(
  body: object,
  context: Partial<NotificationContext> = {},
): [PaymentMethodNotification, NotificationContext] {
  const json = JSON.stringify(body);
  const wire: unknown = JSON.parse(json);
  if (wire === null || typeof wire !== 'object' || Array.isArray(wire)) {
    throw new TypeError('notificationHandlerArgs(): the notification must be a JSON object');
  }
  const parsed = parsePaymentMethodNotification(wire as Record<string, unknown>);
  if (parsed.errors) {
    const fields = parsed.errors.map(({ field, message }) => `${field} ${message}`).join('; ');
    throw new TypeError(`notificationHandlerArgs(): the route would reject this notification with 400: ${fields}`);
  }
  const { notification } = parsed;
  const account = context.account ?? DEFAULT_PAYOUTS_ACCOUNT;
  return [
    notification,
    {
      rawBody: undefined,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) },
      receivedAt: new Date(),
      dedupeKey: notificationDedupeKey(notification, account),
      ip: '127.0.0.1',
      account,
      ...context,
    },
  ];
}
