import type { NotificationContext } from '../../interfaces/notification-context.interface.js';
import type { NotificationTrace } from '../../interfaces/payouts-instrumentation.interface.js';
import type { PaymentMethodNotification } from '../message/payment-method-notification.js';

/**
 * What became of a verified, valid notification: `handled` by every handler, `unhandled` (no handler for its type),
 * `duplicate` of one already handled, `in-progress` elsewhere, or `failed` (the service must send it again).
 */
export type NotificationDispatchOutcome = 'handled' | 'unhandled' | 'duplicate' | 'in-progress' | 'failed';

/**
 * Takes a notification the route has verified and validated, and says what became of it; the route turns that into
 * the reply. The default runs the handlers inline, before the reply; queue mode stores the notification instead.
 */
export interface NotificationDispatcher {
  dispatch(
    notification: PaymentMethodNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): NotificationDispatchOutcome | Promise<NotificationDispatchOutcome>;
}
