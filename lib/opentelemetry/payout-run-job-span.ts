import type { Attributes, Context, Span } from '@opentelemetry/api';
import type {
  NotificationTraceCarrier,
  PayoutRunJobInfo,
  PayoutRunJobTrace,
  PayoutRunJobOutcome,
} from '../interfaces/payouts-instrumentation.interface.js';
import type { RegistrationTelemetry } from './registration-telemetry.js';
import { ATTRIBUTES, SPAN_NAMES } from './telemetry-names.js';

/**
 * One attempt of a payout run's job in a worker, as a consumer span in the trace of the run's `enqueue()` (from the
 * carrier stored in the job); the payout's `createPayout()` span nests under it. The end counts the outcome.
 */
export class PayoutRunJobSpan implements PayoutRunJobTrace {
  private readonly span: Span;
  private readonly context: Context;

  constructor(
    private readonly telemetry: RegistrationTelemetry,
    carrier: NotificationTraceCarrier,
    { runId, requestId, attempt }: PayoutRunJobInfo,
  ) {
    const { api, tracer, account } = telemetry;
    const parent = api.propagation.extract(api.context.active(), carrier);
    const attributes: Attributes = {
      [ATTRIBUTES.account]: account,
      [ATTRIBUTES.runId]: runId,
      [ATTRIBUTES.requestId]: requestId,
      [ATTRIBUTES.attempt]: attempt,
    };
    this.span = tracer.startSpan(SPAN_NAMES.runPayout, { kind: api.SpanKind.CONSUMER, attributes }, parent);
    this.context = api.trace.setSpan(parent, this.span);
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.telemetry.api.context.with(this.context, work);
  }

  end(outcome: PayoutRunJobOutcome | undefined, rejection: string | undefined): void {
    const { api, instruments, account } = this.telemetry;
    if (outcome !== undefined) {
      this.span.setAttribute(ATTRIBUTES.runOutcome, outcome);
      instruments.runPayouts.add(1, { [ATTRIBUTES.account]: account, [ATTRIBUTES.runOutcome]: outcome });
    }
    if (rejection !== undefined) {
      this.span.setAttribute(ATTRIBUTES.errorType, rejection);
      this.span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}
