import { Injectable } from '@nestjs/common';
import { OnPaymentMethodAdded, OnPaymentMethodRemoved } from 'nestjs-payouts';
import type { NotificationContext, PaymentMethodNotification } from 'nestjs-payouts';
import type { ReceivedNotification } from '../notifications/notification-handlers.fixture.js';

/** Receives the cards added on the `eu` account only. */
@Injectable()
export class EuCards {
  readonly received: ReceivedNotification[] = [];

  @OnPaymentMethodAdded({ account: 'eu' })
  added(notification: PaymentMethodNotification, context: NotificationContext): void {
    this.received.push({ handler: 'eu added', notification, context });
  }
}

/** Receives the cards added on the `ke` account only. */
@Injectable()
export class KeCards {
  readonly received: ReceivedNotification[] = [];

  @OnPaymentMethodAdded({ account: 'ke' })
  added(notification: PaymentMethodNotification, context: NotificationContext): void {
    this.received.push({ handler: 'ke added', notification, context });
  }
}

/** Receives the removals of two named accounts, not the unnamed one's. */
@Injectable()
export class NamedAccountRemovals {
  readonly received: ReceivedNotification[] = [];

  @OnPaymentMethodRemoved({ account: ['eu', 'ke'] })
  removed(notification: PaymentMethodNotification, context: NotificationContext): void {
    this.received.push({ handler: 'named removed', notification, context });
  }
}
