import { PayoutsError } from './payouts.error.js';

/**
 * Thrown at bootstrap when a notification handler lives on a request-scoped or transient provider:
 * notifications are not tied to a request of the app's own clients, so there is no scope to build it in.
 */
export class NotificationHandlerScopeError extends PayoutsError {
  constructor(readonly handler: string) {
    super(
      `Notification handler ${handler} is on a request-scoped or transient provider. ` +
        'Move it to a default-scoped (singleton) provider that injects no request-scoped dependency, ' +
        'and resolve request-scoped services inside the handler with ModuleRef.resolve() if needed.',
    );
  }
}
