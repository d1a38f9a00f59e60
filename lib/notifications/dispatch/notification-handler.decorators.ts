import { PaymentMethodEventType } from '../../interfaces/payment-method-event-type.js';

/** Reflect-metadata key under which a handler method lists what it receives, one binding per decorator. */
export const NOTIFICATION_HANDLER_METADATA = Symbol('payouts:notification-handler');
/** Stands for "every event type", the known ones and any the service adds later. */
export const ANY_NOTIFICATION_EVENT = '*';

export interface NotificationHandlerOptions {
  /**
   * The accounts (registration names) whose notifications the method receives: `'eu'`, or several, `['eu', 'ke']`;
   * `'default'` is the unnamed registration. Omitted: every account's. A name no registration has fails the bootstrap.
   */
  account?: string | readonly string[];
}

/** What one decorator asks for: an event type, of the given accounts or of all (`undefined`). */
export interface NotificationHandlerBinding {
  readonly eventType: string;
  readonly accounts: readonly string[] | undefined;
}

function onNotification(eventType: string, options: NotificationHandlerOptions | undefined): MethodDecorator {
  // Checked at bootstrap, against the registrations, rather than here, where they are not known yet.
  const account: unknown = options?.account;
  const binding: NotificationHandlerBinding = {
    eventType,
    accounts: account === undefined ? undefined : Array.isArray(account) ? [...account] : [account as string],
  };
  return (_target, _method, descriptor) => {
    const handlerFn: object = descriptor.value as object;
    const bindings: readonly NotificationHandlerBinding[] =
      Reflect.getMetadata(NOTIFICATION_HANDLER_METADATA, handlerFn) ?? [];
    Reflect.defineMetadata(NOTIFICATION_HANDLER_METADATA, [...bindings, binding], handlerFn);
  };
}

/** Runs the method for every `PAYMENT_METHOD_ADDED` notification, with `(notification, context)`. */
export function OnPaymentMethodAdded(options?: NotificationHandlerOptions): MethodDecorator {
  return onNotification(PaymentMethodEventType.PAYMENT_METHOD_ADDED, options);
}

/** Runs the method for every `PAYMENT_METHOD_REMOVED` notification, with `(notification, context)`. */
export function OnPaymentMethodRemoved(options?: NotificationHandlerOptions): MethodDecorator {
  return onNotification(PaymentMethodEventType.PAYMENT_METHOD_REMOVED, options);
}

/** Runs the method for every notification, whatever its event type, including types not documented yet. */
export function OnPaymentMethodEvent(options?: NotificationHandlerOptions): MethodDecorator {
  return onNotification(ANY_NOTIFICATION_EVENT, options);
}
