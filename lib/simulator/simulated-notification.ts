import { PaymentMethodEventType } from '../interfaces/payment-method-event-type.js';
import { applyOverrides, type Overrides } from './apply-overrides.js';

/** A notification body as the payouts service puts it on the wire (spec section 2.2). */
export interface SimulatedNotification {
  eventType: string;
  timestamp: string;
  shopper: SimulatedShopper;
  paymentMethod: SimulatedPaymentMethod;
  [field: string]: unknown;
}

export interface SimulatedShopper {
  id: string;
  partner_shopper_id: string;
  email: string;
  [field: string]: unknown;
}

export interface SimulatedPaymentMethod {
  id: string;
  type: string;
  card?: SimulatedCard;
  [field: string]: unknown;
}

export interface SimulatedCard {
  lastFour: string;
  expirationMonth: string;
  expirationYear: string;
  [field: string]: unknown;
}

/**
 * Changes to a sample notification. Objects merge field by field; any other value replaces;
 * a field set to `undefined` is removed, for testing how a receiver treats a missing field.
 */
export type NotificationOverrides = Overrides<SimulatedNotification>;

/** A `PAYMENT_METHOD_ADDED` notification for a saved card, with `overrides` applied. */
export function paymentMethodAddedNotification(overrides?: NotificationOverrides): SimulatedNotification {
  return paymentMethodNotification(PaymentMethodEventType.PAYMENT_METHOD_ADDED, overrides);
}

/** A `PAYMENT_METHOD_REMOVED` notification for the same card as `paymentMethodAddedNotification()`. */
export function paymentMethodRemovedNotification(overrides?: NotificationOverrides): SimulatedNotification {
  return paymentMethodNotification(PaymentMethodEventType.PAYMENT_METHOD_REMOVED, overrides);
}

/** A notification of any event type, known or not, shaped like the spec's sample and timestamped now. */
export function paymentMethodNotification(
  eventType: PaymentMethodEventType | (string & {}),
  overrides?: NotificationOverrides,
): SimulatedNotification {
  const sample: SimulatedNotification = {
    eventType,
    timestamp: new Date().toISOString(),
    shopper: {
      id: 'shp_7Qk2Lm9Xr4',
      partner_shopper_id: 'customer-1001',
      email: 'shopper@example.com',
    },
    paymentMethod: {
      id: 'pmt_3Vb8Hs1Ty6',
      type: 'card',
      card: { lastFour: '4242', expirationMonth: '08', expirationYear: '2030' },
    },
  };
  return overrides === undefined ? sample : applyOverrides(sample, overrides);
}
