import { performance } from 'node:perf_hooks';
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { PayoutsAttemptOutcome, PayoutsCallTrace } from '../interfaces/payouts-instrumentation.interface.js';
import type { RegistrationTelemetry } from './registration-telemetry.js';
import { ATTRIBUTES, SPAN_NAMES } from './telemetry-names.js';

/**
 * How a `createPayout()` call ended: `created` (a 2xx reply), `rejected` (an error status), `unknown` (no complete
 * reply: the payout may exist), `network_error` (never sent), `not_sent` (ended before an attempt could be sent: the
 * access token could not be had, or the caller aborted while the call waited to retry).
 */
type PayoutOutcome = 'created' | 'rejected' | 'unknown' | 'network_error' | 'not_sent';

const FINAL_OUTCOMES: Readonly<Record<Exclude<PayoutsAttemptOutcome, 'retrying'>, PayoutOutcome>> = {
  succeeded: 'created',
  rejected: 'rejected',
  unknown: 'unknown',
  network_error: 'network_error',
};

/**
 * One `createPayout()` call as a span over all its attempts, which run in its context (so the spans of an HTTP client
 * instrumentation nest under it); a retry counts and leaves an event on the span; the end records the outcome.
 */
export class PayoutSpan implements PayoutsCallTrace {
  private readonly startedAt = performance.now();
  private readonly span: Span;
  private readonly context: Context;
  private attempts = 0;
  private lastOutcome: PayoutsAttemptOutcome | undefined;
  private lastStatus: number | undefined;
  private lastErrorCode: string | undefined;

  constructor(
    private readonly telemetry: RegistrationTelemetry,
    requestId: string | undefined,
  ) {
    const { api, tracer, account } = telemetry;
    const attributes: Attributes = { [ATTRIBUTES.account]: account };
    if (requestId !== undefined) attributes[ATTRIBUTES.requestId] = requestId;
    const parent = api.context.active();
    this.span = tracer.startSpan(SPAN_NAMES.payout, { kind: api.SpanKind.INTERNAL, attributes }, parent);
    this.context = api.trace.setSpan(parent, this.span);
  }

  run<T>(send: () => Promise<T>): Promise<T> {
    return this.telemetry.api.context.with(this.context, send);
  }

  attemptStarted(attempt: number): void {
    this.attempts = attempt;
  }

  attemptEnded(outcome: PayoutsAttemptOutcome, status: number | undefined, errorCode: string | undefined): void {
    this.lastOutcome = outcome;
    this.lastStatus = status;
    this.lastErrorCode = errorCode;
    if (outcome !== 'retrying') return;
    const reason = attemptErrorType(status, errorCode);
    this.span.addEvent(SPAN_NAMES.retryEvent, {
      [ATTRIBUTES.attempt]: this.attempts,
      [ATTRIBUTES.errorType]: reason,
    });
    const { instruments, account } = this.telemetry;
    instruments.payoutRetries.add(1, { [ATTRIBUTES.account]: account, [ATTRIBUTES.errorType]: reason });
  }

  end(rejection: string | undefined): void {
    const { api, instruments, account } = this.telemetry;
    const last = this.lastOutcome;
    const outcome: PayoutOutcome =
      rejection === undefined ? 'created' : last && last !== 'retrying' ? FINAL_OUTCOMES[last] : 'not_sent';
    const metricAttributes: Attributes = { [ATTRIBUTES.account]: account, [ATTRIBUTES.payoutOutcome]: outcome };
    if (outcome !== 'created') {
      // A status or error code says why better than the error's class; `not_sent` has only the class.
      const errorType = outcome === 'not_sent' ? rejection! : attemptErrorType(this.lastStatus, this.lastErrorCode);
      metricAttributes[ATTRIBUTES.errorType] = errorType;
      this.span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    this.span.setAttributes({ ...metricAttributes, [ATTRIBUTES.attempts]: this.attempts });
    if (this.lastStatus !== undefined && outcome !== 'not_sent') {
      this.span.setAttribute(ATTRIBUTES.statusCode, this.lastStatus);
    }
    this.span.end();
    instruments.payoutRequests.add(1, metricAttributes);
    instruments.payoutDuration.record((performance.now() - this.startedAt) / 1000, metricAttributes);
  }
}

/**
 * Why an attempt failed, as `error.type` says it: the error code when the reply was cut short or never came
 * (`ECONNREFUSED`, `ETIMEDOUT`), else the status (`503`), as the semantic conventions do for HTTP.
 */
function attemptErrorType(status: number | undefined, errorCode: string | undefined): string {
  return errorCode ?? String(status);
}
