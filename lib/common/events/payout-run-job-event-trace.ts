import { performance } from 'node:perf_hooks';
import type {
  PayoutRunJobInfo,
  PayoutRunJobTrace,
  PayoutRunJobOutcome,
} from '../../interfaces/payouts-instrumentation.interface.js';
import type { PayoutsEventEmitter } from './payouts-event-emitter.js';

/** Passes everything on to the trace it wraps, and emits `payoutRunJob` when the attempt ends. */
export class PayoutRunJobEventTrace implements PayoutRunJobTrace {
  private readonly startedAt = performance.now();

  constructor(
    private readonly inner: PayoutRunJobTrace,
    private readonly events: PayoutsEventEmitter,
    private readonly account: string,
    private readonly info: PayoutRunJobInfo,
  ) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.inner.run(work);
  }

  end(outcome: PayoutRunJobOutcome | undefined, rejection: string | undefined): void {
    this.inner.end(outcome, rejection);
    const { runId, requestId, attempt } = this.info;
    this.events.emit('payoutRunJob', {
      account: this.account,
      runId,
      requestId,
      attempt,
      outcome,
      rejection,
      elapsedMs: performance.now() - this.startedAt,
    });
  }
}
