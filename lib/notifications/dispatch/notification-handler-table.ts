import type { NotificationContext } from '../../interfaces/notification-context.interface.js';
import type { PaymentMethodNotification } from '../message/payment-method-notification.js';

export interface NotificationHandler {
  /** `ClassName.method`, for logs. */
  readonly name: string;
  /** What records of its success name it by: `name`, with ` #2`, ` #3`… for later instances of one class. */
  readonly id: string;
  /** The handler method bound to its instance, once at bootstrap: it may return a value or a promise, or throw. */
  readonly invoke: (notification: PaymentMethodNotification, context: NotificationContext) => unknown;
}

/** The handlers of each event type, resolved once at bootstrap so a request only does a map lookup. */
export class NotificationHandlerTable {
  constructor(
    /** Handlers per event type, catch-all handlers included. */
    private readonly byEventType: ReadonlyMap<string, readonly NotificationHandler[]>,
    /** Handlers of event types no handler names. */
    private readonly catchAll: readonly NotificationHandler[],
  ) {}

  forEvent(eventType: string): readonly NotificationHandler[] {
    return this.byEventType.get(eventType) ?? this.catchAll;
  }
}
