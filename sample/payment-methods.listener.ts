import { Injectable, Logger } from '@nestjs/common';
import {
  type NotificationContext,
  OnPaymentMethodAdded,
  OnPaymentMethodRemoved,
  type PaymentMethodNotification,
} from 'nestjs-payouts';
import { SavedCardsStore } from './saved-cards.store.js';

/** Keeps the shoppers' saved cards in step with the payouts service's notifications. */
@Injectable()
export class PaymentMethodsListener {
  private readonly logger = new Logger(PaymentMethodsListener.name);

  constructor(private readonly savedCards: SavedCardsStore) {}

  @OnPaymentMethodAdded()
  onAdded(notification: PaymentMethodNotification, context: NotificationContext): void {
    const { shopper, paymentMethod } = notification;
    // The route guarantees the details of an added card; other payment method types carry none this app keeps.
    const { card } = paymentMethod;
    if (paymentMethod.type !== 'card' || !card) {
      this.logger.log(`onAdded: ${paymentMethod.type} ${paymentMethod.id} for shopper ${shopper.id}, nothing to save`);
      return;
    }
    this.savedCards.save(shopper.id, {
      paymentMethodId: paymentMethod.id,
      lastFour: card.lastFour,
      expires: `${card.expirationMonth}/${card.expirationYear}`,
    });
    this.logger.log(
      `onAdded: saved card ending ${card.lastFour} (${paymentMethod.id}) for shopper ${shopper.id}, ` +
        `received ${context.receivedAt.toISOString()}`,
    );
  }

  @OnPaymentMethodRemoved()
  onRemoved(notification: PaymentMethodNotification): void {
    const { shopper, paymentMethod } = notification;
    this.savedCards.remove(shopper.id, paymentMethod.id);
    this.logger.log(`onRemoved: removed ${paymentMethod.id} from shopper ${shopper.id}`);
  }
}
