import { describe, expect, it } from 'vitest';
import {
  paymentMethodAddedNotification,
  paymentMethodNotification,
  paymentMethodRemovedNotification,
} from 'nestjs-payouts/testing';

describe('notification factories', () => {
  it('builds a PAYMENT_METHOD_ADDED body shaped like the spec sample', () => {
    const notification = paymentMethodAddedNotification();

    expect(notification).toEqual({
      eventType: 'PAYMENT_METHOD_ADDED',
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      shopper: { id: 'shp_7Qk2Lm9Xr4', partner_shopper_id: 'customer-1001', email: 'shopper@example.com' },
      paymentMethod: {
        id: 'pmt_3Vb8Hs1Ty6',
        type: 'card',
        card: { lastFour: '4242', expirationMonth: '08', expirationYear: '2030' },
      },
    });
  });

  it('builds a PAYMENT_METHOD_REMOVED body for the same card', () => {
    const added = paymentMethodAddedNotification();
    const removed = paymentMethodRemovedNotification();

    expect(removed.eventType).toBe('PAYMENT_METHOD_REMOVED');
    expect(removed.paymentMethod).toEqual(added.paymentMethod);
    expect(removed.shopper).toEqual(added.shopper);
  });

  it('merges nested overrides field by field and keeps the other sample values', () => {
    const notification = paymentMethodAddedNotification({
      timestamp: '2030-05-01T10:00:00.000Z',
      shopper: { email: 'ada@example.com' },
      paymentMethod: { card: { lastFour: '0005' } },
    });

    expect(notification.timestamp).toBe('2030-05-01T10:00:00.000Z');
    expect(notification.shopper).toEqual({
      id: 'shp_7Qk2Lm9Xr4',
      partner_shopper_id: 'customer-1001',
      email: 'ada@example.com',
    });
    expect(notification.paymentMethod.card).toEqual({
      lastFour: '0005',
      expirationMonth: '08',
      expirationYear: '2030',
    });
  });

  it('removes a field set to undefined and adds unknown fields', () => {
    const notification = paymentMethodAddedNotification({
      shopper: { email: undefined },
      paymentMethod: { card: undefined, type: 'wallet', wallet: { provider: 'mpesa' } },
    });

    expect(notification.shopper).toEqual({ id: 'shp_7Qk2Lm9Xr4', partner_shopper_id: 'customer-1001' });
    expect(notification.paymentMethod).toEqual({ id: 'pmt_3Vb8Hs1Ty6', type: 'wallet', wallet: { provider: 'mpesa' } });
  });

  it('builds any event type', () => {
    expect(paymentMethodNotification('PAYMENT_METHOD_EXPIRED').eventType).toBe('PAYMENT_METHOD_EXPIRED');
  });

  it('keeps an own "__proto__" field from parsed JSON as data, without touching prototypes', () => {
    const overrides = JSON.parse('{"__proto__": {"polluted": true}, "shopper": {"__proto__": {"x": 1}}}') as object;
    const notification = paymentMethodAddedNotification(overrides);

    expect(Object.getPrototypeOf(notification)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(notification)).__proto__).toEqual({ polluted: true });
  });

  it('does not change the caller-owned overrides object', () => {
    const overrides = { paymentMethod: { wallet: { provider: 'mpesa' } } };
    const notification = paymentMethodAddedNotification(overrides);
    (notification.paymentMethod.wallet as { provider: string }).provider = 'changed';

    expect(overrides).toEqual({ paymentMethod: { wallet: { provider: 'mpesa' } } });
  });
});
