import { EMPTY_CARRIER, NOOP_PAYOUT_RUN_JOB_TRACE } from '../noop-instrumentation.js';
import type {
  NotificationTrace,
  NotificationTraceCarrier,
  PayoutReconcileLookupAnswer,
  PayoutRunJobInfo,
  PayoutRunJobTrace,
  PayoutsCallOperation,
  PayoutsCallTargetInfo,
  PayoutsCallTrace,
  PayoutsInstrumentation,
} from '../../interfaces/payouts-instrumentation.interface.js';
import { NotificationEventTrace } from './notification-event-trace.js';
import { PayoutRunJobEventTrace } from './payout-run-job-event-trace.js';
import { PayoutsCallEventTrace } from './payouts-call-event-trace.js';
import type { PayoutsEventEmitter } from './payouts-event-emitter.js';

/**
 * A registration's instrumentation: the one of the `telemetry` option (or the no-op), wrapped so that the events of
 * `PayoutsService` are emitted too. A trace is wrapped only while someone listens, so without listeners this costs
 * one check per request.
 */
export class EventsInstrumentation implements PayoutsInstrumentation {
  constructor(
    private readonly inner: PayoutsInstrumentation,
    private readonly events: PayoutsEventEmitter,
    private readonly account: string,
  ) {}

  startNotification(): NotificationTrace {
    return this.withNotificationEvent(this.inner.startNotification());
  }

  resumeNotification(carrier: NotificationTraceCarrier): NotificationTrace {
    return this.withNotificationEvent(this.inner.resumeNotification(carrier));
  }

  startPayoutsCall(
    operation: PayoutsCallOperation,
    target: PayoutsCallTargetInfo,
    requestId: string | undefined,
  ): PayoutsCallTrace {
    const trace = this.inner.startPayoutsCall(operation, target, requestId);
    if (!this.events.listening('request') && !this.events.listening('response')) return trace;
    return new PayoutsCallEventTrace(trace, this.events, this.account, operation, target, requestId);
  }

  payoutRunCarrier(): NotificationTraceCarrier {
    return this.inner.payoutRunCarrier?.() ?? EMPTY_CARRIER;
  }

  startPayoutRunJob(carrier: NotificationTraceCarrier, info: PayoutRunJobInfo): PayoutRunJobTrace {
    const trace = this.inner.startPayoutRunJob?.(carrier, info) ?? NOOP_PAYOUT_RUN_JOB_TRACE;
    if (!this.events.listening('payoutRunJob')) return trace;
    return new PayoutRunJobEventTrace(trace, this.events, this.account, info);
  }

  payoutRunCompleted(runId: string): void {
    this.inner.payoutRunCompleted?.(runId);
  }

  payoutRunResolved(decision: 'sent' | 'absent'): void {
    this.inner.payoutRunResolved?.(decision);
  }

  payoutRunLookedUp(answer: PayoutReconcileLookupAnswer): void {
    this.inner.payoutRunLookedUp?.(answer);
  }

  payoutRunGivenUp(): void {
    this.inner.payoutRunGivenUp?.();
  }

  private withNotificationEvent(trace: NotificationTrace): NotificationTrace {
    return this.events.listening('notification') ? new NotificationEventTrace(trace, this.events, this.account) : trace;
  }
}
