import { EventEmitter } from 'node:events';
import type { PayoutsEvents } from '../../interfaces/payouts-events.interface.js';
import { PackageLogger } from '../package-logger.js';

/** A listener of one of the events of `PayoutsService`. */
export type PayoutsEventListener<E extends keyof PayoutsEvents> = (event: PayoutsEvents[E]) => void;

/**
 * The events of one registration: its `PayoutsService` adds and removes the listeners, its instrumentation emits.
 * Listeners run synchronously, in the order they were added. One that throws, or returns a promise that rejects, is
 * logged and the others still run: a listener's bug never fails a payout nor a notification.
 */
export class PayoutsEventEmitter {
  private readonly emitter = new EventEmitter();
  private readonly logger = new PackageLogger('PayoutsEvents');

  on<E extends keyof PayoutsEvents>(event: E, listener: PayoutsEventListener<E>): void {
    this.emitter.on(event, listener);
  }

  once<E extends keyof PayoutsEvents>(event: E, listener: PayoutsEventListener<E>): void {
    this.emitter.once(event, listener);
  }

  off<E extends keyof PayoutsEvents>(event: E, listener: PayoutsEventListener<E>): void {
    this.emitter.off(event, listener);
  }

  /** Whether anyone listens, so that nothing is measured nor built for an event nobody receives. */
  listening(event: keyof PayoutsEvents): boolean {
    return this.emitter.listenerCount(event) > 0;
  }

  emit<E extends keyof PayoutsEvents>(event: E, payload: PayoutsEvents[E]): void {
    // The raw listeners, so that a `once` listener is removed as it runs.
    for (const listener of this.emitter.rawListeners(event) as PayoutsEventListener<E>[]) {
      try {
        const returned: unknown = listener(payload);
        if (returned instanceof Promise) returned.catch((error: unknown) => this.listenerFailed(event, error));
      } catch (error) {
        this.listenerFailed(event, error);
      }
    }
  }

  private listenerFailed(event: keyof PayoutsEvents, error: unknown): void {
    this.logger.error(`A '${event}' listener failed; the other listeners and the call went on`, error);
  }
}
