import { PaymentMethodEventType } from '../../interfaces/payment-method-event-type.js';

/** Reflect-metadata key under which a handler method lists the event types it receives. */
export const NOTIFICATION_HANDLER_METADATA = Symbol('payouts:notification-handler');
/** Stands for "every event type", the known ones and any the service adds later. */
export const ANY_NOTIFICATION_EVENT = '*';

function onNotification(eventType: string): MethodDecorator {
  return (_target, _method, descriptor) => {
    const handlerFn: object = descriptor.value as object;
    const eventTypes: readonly string[] = Reflect.getMetadata(NOTIFICATION_HANDLER_METADATA, handlerFn) ?? [];
    Reflect.defineMetadata(NOTIFICATION_HANDLER_METADATA, [...eventTypes, eventType], handlerFn);
  };
}

/** Runs the method for every `PAYMENT_METHOD_ADDED` notification, with `(notification, context)`. */
export function OnPaymentMethodAdded(): MethodDecorator {
  return onNotification(PaymentMethodEventType.PAYMENT_METHOD_ADDED);
}

/** Runs the method for every `PAYMENT_METHOD_REMOVED` notification, with `(notification, context)`. */
export function OnPaymentMethodRemoved(): MethodDecorator {
  return onNotification(PaymentMethodEventType.PAYMENT_METHOD_REMOVED);
}

/** Runs the method for every notification, whatever its event type, including types not documented yet. */
export function OnPaymentMethodEvent(): MethodDecorator {
  return onNotification(ANY_NOTIFICATION_EVENT);
}
