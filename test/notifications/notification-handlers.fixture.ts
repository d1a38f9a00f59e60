import { Injectable } from '@nestjs/common';
import { OnPaymentMethodAdded, OnPaymentMethodEvent, OnPaymentMethodRemoved } from 'nestjs-payouts';
import type { NotificationContext } from 'nestjs-payouts';
import { PaymentMethodNotification } from 'nestjs-payouts';

export interface ReceivedNotification {
  readonly handler: string;
  readonly notification: PaymentMethodNotification;
  readonly context: NotificationContext;
}

/** Records what each handler receives; `behaviour` lets a test make the handlers wait or fail. */
@Injectable()
export class CardEvents {
  readonly received: ReceivedNotification[] = [];
  behaviour: (notification: PaymentMethodNotification) => void | Promise<void> = () => undefined;

  @OnPaymentMethodAdded()
  async added(notification: PaymentMethodNotification, context: NotificationContext): Promise<void> {
    this.received.push({ handler: 'added', notification, context });
    await this.behaviour(notification);
  }

  @OnPaymentMethodRemoved()
  removed(notification: PaymentMethodNotification, context: NotificationContext): void {
    this.received.push({ handler: 'removed', notification, context });
  }
}

/** A synchronous handler that throws on every notification, as a plain method may. */
@Injectable()
export class ThrowingRemovals {
  calls = 0;

  @OnPaymentMethodRemoved()
  removed(): void {
    this.calls += 1;
    throw new Error('removal store unavailable');
  }
}

/** A second handler of every event, in another class, to show that all matching handlers run. */
@Injectable()
export class AuditTrail {
  readonly received: ReceivedNotification[] = [];

  @OnPaymentMethodEvent()
  record(notification: PaymentMethodNotification, context: NotificationContext): void {
    this.received.push({ handler: 'any', notification, context });
  }
}

/** A promise with its resolve function, to hold a handler until the test lets it go. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
