import { describe, expect, it } from 'vitest';
import {
  NotificationCard,
  NotificationPaymentMethod,
  NotificationShopper,
  PaymentMethodNotification,
} from 'nestjs-payouts';
import { parsePaymentMethodNotification } from '../../lib/notifications/message/payment-method-notification.parser.js';

/** A notification's JSON text with unknown fields at every level, in an order unlike the classes' own. */
const TEXT = JSON.stringify({
  extra: { nested: [1, { deep: true }] },
  paymentMethod: {
    card: { note: 'x', expirationYear: '2029', lastFour: '4242', expirationMonth: '08' },
    brand: 'visa',
    type: 'card',
    id: 'pmt_1',
  },
  timestamp: '2025-03-14T09:26:53.589Z',
  shopper: { email: 'shopper@example.com', tier: 'gold', id: 'shp_1' },
  eventType: 'PAYMENT_METHOD_ADDED',
});

const parse = (text: string) => parsePaymentMethodNotification(JSON.parse(text) as Record<string, unknown>);

describe('parsePaymentMethodNotification copying', () => {
  it('builds the classes with every field, declared ones first in the class order, then unknown ones as sent', () => {
    const { notification, errors } = parse(TEXT);
    expect(errors).toBeUndefined();
    expect(notification).toBeInstanceOf(PaymentMethodNotification);
    expect(notification!.shopper).toBeInstanceOf(NotificationShopper);
    expect(notification!.paymentMethod).toBeInstanceOf(NotificationPaymentMethod);
    expect(notification!.paymentMethod.card).toBeInstanceOf(NotificationCard);
    expect(Object.keys(notification!)).toEqual(['eventType', 'timestamp', 'shopper', 'paymentMethod', 'extra']);
    expect(Object.keys(notification!.shopper)).toEqual(['id', 'partner_shopper_id', 'email', 'tier']);
    expect(Object.keys(notification!.paymentMethod)).toEqual(['id', 'type', 'card', 'brand']);
    expect(Object.keys(notification!.paymentMethod.card!)).toEqual([
      'lastFour',
      'expirationMonth',
      'expirationYear',
      'note',
    ]);
    expect(JSON.parse(JSON.stringify(notification))).toEqual(JSON.parse(TEXT));
    expect(notification!.shopper.partner_shopper_id).toBeUndefined();
  });

  it('finds a prototype key inside a declared field that is not an object copied on its own', () => {
    const text = TEXT.replace('"type":"card"', '"type":"paypal"').replace(
      /"card":\{[^}]*\}/,
      '"card":[{"__proto__":{"polluted":true}}]',
    );
    expect(parse(text)).toEqual({
      errors: [{ field: 'paymentMethod.card[0].__proto__', message: expect.stringContaining('prototype') }],
    });
  });

  it('finds a prototype key in an unknown field, and skips a harmless constructor key', () => {
    expect(parse(TEXT.replace('"tier":"gold"', '"tier":{"__proto__":{}}')).errors).toEqual([
      { field: 'shopper.tier.__proto__', message: expect.stringContaining('prototype') },
    ]);
    const { notification } = parse(TEXT.replace('"brand":"visa"', '"constructor":"visa"'));
    expect(Object.hasOwn(notification!.paymentMethod, 'constructor')).toBe(false);
  });
});
