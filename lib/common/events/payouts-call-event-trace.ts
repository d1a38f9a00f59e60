import { performance } from 'node:perf_hooks';
import type { PayoutsRequestEvent } from '../../interfaces/payouts-events.interface.js';
import type {
  PayoutsAttemptOutcome,
  PayoutsCallOperation,
  PayoutsCallTargetInfo,
  PayoutsCallTrace,
} from '../../interfaces/payouts-instrumentation.interface.js';
import type { PayoutsEventEmitter } from './payouts-event-emitter.js';

/** Passes everything on to the trace it wraps, and emits `request` and `response` for each attempt. */
export class PayoutsCallEventTrace implements PayoutsCallTrace {
  /** The attempt under way, as its `request` event said it. */
  private request: PayoutsRequestEvent | undefined;
  private sentAt = 0;

  constructor(
    private readonly inner: PayoutsCallTrace,
    private readonly events: PayoutsEventEmitter,
    private readonly account: string,
    private readonly operation: PayoutsCallOperation,
    private readonly target: PayoutsCallTargetInfo,
    private readonly requestId: string | undefined,
  ) {}

  run<T>(send: () => Promise<T>): Promise<T> {
    return this.inner.run(send);
  }

  attemptStarted(attempt: number): void {
    this.inner.attemptStarted(attempt);
    const { account, operation, requestId, target } = this;
    this.request = { account, operation, requestId, attempt, method: target.method, path: target.path };
    this.sentAt = performance.now();
    this.events.emit('request', this.request);
  }

  attemptEnded(outcome: PayoutsAttemptOutcome, status: number | undefined, errorCode: string | undefined): void {
    this.inner.attemptEnded(outcome, status, errorCode);
    // The client ends only an attempt it started.
    this.events.emit('response', {
      ...this.request!,
      status,
      errorCode,
      elapsedMs: performance.now() - this.sentAt,
      outcome,
    });
  }

  end(rejection: string | undefined): void {
    this.inner.end(rejection);
  }
}
