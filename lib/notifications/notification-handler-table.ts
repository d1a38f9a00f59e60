import type { NotificationContext } from './notification-context.interface.js';
import type { PaymentMethodNotification } from './payment-method-notification.js';

export interface NotificationHandler {
  /** `ClassName.method`, for logs. */
  readonly name: string;
  /** Calls the handler method; a synchronous throw becomes a rejection. */
  readonly invoke: (notification: PaymentMethodNotification, context: NotificationContext) => Promise<unknown>;
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
