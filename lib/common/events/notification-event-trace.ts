import { performance } from 'node:perf_hooks';
import type {
  NotificationDedupeResult,
  NotificationOutcome,
  NotificationTrace,
  NotificationTraceCarrier,
} from '../../interfaces/payouts-instrumentation.interface.js';
import type { PayoutsEventEmitter } from './payouts-event-emitter.js';

/** Passes everything on to the trace it wraps, and emits `notification` when the outcome is known. */
export class NotificationEventTrace implements NotificationTrace {
  private readonly startedAt = performance.now();
  private eventType: string | undefined;
  private dedupe: NotificationDedupeResult | undefined;
  private skippedHandlers: string[] | undefined;

  constructor(
    private readonly inner: NotificationTrace,
    private readonly events: PayoutsEventEmitter,
    private readonly account: string,
  ) {}

  validated(eventType: string): void {
    this.eventType = eventType;
    this.inner.validated(eventType);
  }

  deduped(result: NotificationDedupeResult): void {
    this.dedupe = result;
    this.inner.deduped(result);
  }

  runHandler<T>(handler: string, run: () => T): T {
    return this.inner.runHandler(handler, run);
  }

  handlerSkipped(handler: string): void {
    (this.skippedHandlers ??= []).push(handler);
    this.inner.handlerSkipped?.(handler);
  }

  carrier(): NotificationTraceCarrier {
    return this.inner.carrier();
  }

  end(outcome: NotificationOutcome): void {
    this.inner.end(outcome);
    this.events.emit('notification', {
      account: this.account,
      eventType: this.eventType,
      outcome,
      dedupe: this.dedupe,
      elapsedMs: performance.now() - this.startedAt,
      ...(this.skippedHandlers && { skippedHandlers: this.skippedHandlers }),
    });
  }
}
