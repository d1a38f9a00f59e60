import { NOOP_PAYOUTS_CALL_TRACE } from '../common/noop-instrumentation.js';
import type {
  NotificationTrace,
  NotificationTraceCarrier,
  PayoutsCallOperation,
  PayoutsCallTargetInfo,
  PayoutsCallTrace,
  PayoutsInstrumentation,
} from '../interfaces/payouts-instrumentation.interface.js';
import { NotificationSpan } from './notification-span.js';
import { PayoutSpan } from './payout-span.js';
import type { RegistrationTelemetry } from './registration-telemetry.js';

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
}
