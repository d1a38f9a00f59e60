import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import type { NotificationContext } from 'nestjs-payouts';
import { PaymentMethodNotification } from 'nestjs-payouts';
import {
  notificationHandlerArgs,
  paymentMethodAddedNotification,
  paymentMethodRemovedNotification,
} from 'nestjs-payouts/testing';

/** A user's handler, called directly as a unit test would. */
@Injectable()
class CardsListener {
  readonly saved: string[] = [];

  onAdded(notification: PaymentMethodNotification, context: NotificationContext): void {
    this.saved.push(`${notification.shopper.id}/${notification.paymentMethod.card?.lastFour} ${context.dedupeKey}`);
  }
}

describe('notificationHandlerArgs()', () => {
  it('gives a handler the parsed notification and a context, as the route would', async () => {
    const listener = new CardsListener();
    const body = paymentMethodAddedNotification({
      timestamp: '2030-05-01T10:00:00.000Z',
      paymentMethod: { card: { lastFour: '0005' } },
    });

    listener.onAdded(...notificationHandlerArgs(body));

    expect(listener.saved).toEqual([
      'shp_7Qk2Lm9Xr4/0005 PAYMENT_METHOD_ADDED:shp_7Qk2Lm9Xr4:pmt_3Vb8Hs1Ty6:2030-05-01T10%3A00%3A00.000Z',
    ]);
  });

  it('builds class instances and keeps unknown fields', () => {
    const [notification, context] = notificationHandlerArgs(
      paymentMethodRemovedNotification({ shopper: { loyaltyTier: 'gold' } }),
    );

    expect(notification).toBeInstanceOf(PaymentMethodNotification);
    expect(notification.eventType).toBe('PAYMENT_METHOD_REMOVED');
    expect(notification.shopper.loyaltyTier).toBe('gold');
    expect(context).toMatchObject({ rawBody: undefined, ip: '127.0.0.1' });
    expect(context.headers['content-type']).toBe('application/json');
    expect(context.receivedAt).toBeInstanceOf(Date);
  });

  it('uses the given context fields', () => {
    const receivedAt = new Date('2030-05-01T10:00:01.000Z');
    const rawBody = Buffer.from('{}');

    const [, context] = notificationHandlerArgs(paymentMethodAddedNotification(), {
      receivedAt,
      rawBody,
      ip: '203.0.113.7',
    });

    expect(context).toMatchObject({ receivedAt, rawBody, ip: '203.0.113.7' });
  });

  it('throws, naming the fields, for a notification the route would reject', () => {
    expect(() =>
      notificationHandlerArgs(
        paymentMethodAddedNotification({ shopper: { id: undefined }, paymentMethod: { card: { lastFour: '42' } } }),
      ),
    ).toThrow(
      new TypeError(
        'notificationHandlerArgs(): the route would reject this notification with 400: ' +
          'shopper.id must be a non-empty string; paymentMethod.card.lastFour must be 4 digits',
      ),
    );
  });

  it('throws for a body that is not a JSON object', () => {
    expect(() => notificationHandlerArgs([1, 2])).toThrow(
      new TypeError('notificationHandlerArgs(): the notification must be a JSON object'),
    );
  });
});
