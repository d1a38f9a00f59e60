import { NOOP_PAYOUTS_CALL_TRACE } from '../common/noop-instrumentation.js';
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
} from '../interfaces/payouts-instrumentation.interface.js';
import { NotificationSpan } from './notification-span.js';
import { PayoutRunJobSpan } from './payout-run-job-span.js';
import { PayoutSpan } from './payout-span.js';
import type { RegistrationTelemetry } from './registration-telemetry.js';
import { ATTRIBUTES } from './telemetry-names.js';

/** The instrumentation of one registration: spans and metrics for its notifications and its `createPayout()` calls. */
export class OpenTelemetryInstrumentation implements PayoutsInstrumentation {
  constructor(private readonly telemetry: RegistrationTelemetry) {}

  startNotification(): NotificationTrace {
    return new NotificationSpan(this.telemetry, this.telemetry.api.context.active(), false);
  }

  resumeNotification(carrier: NotificationTraceCarrier): NotificationTrace {
    const { api } = this.telemetry;
    return new NotificationSpan(this.telemetry, api.propagation.extract(api.context.active(), carrier), true);
  }

  /** `request()` calls reach any endpoint, so they are left to the app's HTTP client instrumentation. */
  startPayoutsCall(
    operation: PayoutsCallOperation,
    _target: PayoutsCallTargetInfo,
    requestId: string | undefined,
  ): PayoutsCallTrace {
    return operation === 'create_payout' ? new PayoutSpan(this.telemetry, requestId) : NOOP_PAYOUTS_CALL_TRACE;
  }

  payoutRunCarrier(): NotificationTraceCarrier {
    const carrier: Record<string, string> = {};
    this.telemetry.api.propagation.inject(this.telemetry.api.context.active(), carrier);
    return carrier;
  }

  startPayoutRunJob(carrier: NotificationTraceCarrier, info: PayoutRunJobInfo): PayoutRunJobTrace {
    return new PayoutRunJobSpan(this.telemetry, carrier, info);
  }

  /** The run's id is not an attribute: metrics stay low in cardinality. */
  payoutRunCompleted(): void {
    this.telemetry.instruments.runCompletions.add(1, { [ATTRIBUTES.account]: this.telemetry.account });
  }

  payoutRunResolved(decision: 'sent' | 'absent'): void {
    const { instruments, account } = this.telemetry;
    instruments.runResolutions.add(1, { [ATTRIBUTES.account]: account, [ATTRIBUTES.resolution]: decision });
  }

  /** Neither the request id nor the run's id: they stay in the log lines of the sweep. */
  payoutRunLookedUp(answer: PayoutReconcileLookupAnswer): void {
    const { instruments, account } = this.telemetry;
    instruments.reconcileLookups.add(1, { [ATTRIBUTES.account]: account, [ATTRIBUTES.reconcileAnswer]: answer });
  }

  payoutRunGivenUp(): void {
    this.telemetry.instruments.reconcileGivenUp.add(1, { [ATTRIBUTES.account]: this.telemetry.account });
  }
}
