import { performance } from 'node:perf_hooks';
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type {
  NotificationDedupeResult,
  NotificationOutcome,
  NotificationTrace,
  NotificationTraceCarrier,
} from '../interfaces/payouts-instrumentation.interface.js';
import { eventTypeBucket } from './event-type-bucket.js';
import { exceptionWithoutMessage } from './exception-without-message.js';
import type { RegistrationTelemetry } from './registration-telemetry.js';
import { ATTRIBUTES, SPAN_NAMES } from './telemetry-names.js';

/**
 * One notification as a span, started under the context that is active when the request reaches the route (the
 * HTTP server span of an HTTP instrumentation), with a child span per handler; and its metrics when it ends.
 */
export class NotificationSpan implements NotificationTrace {
  private readonly startedAt = performance.now();
  private readonly span: Span;
  /** The span's context: handlers run in it, and a queue dispatcher carries it. */
  private readonly context: Context;
  private eventType: string | undefined;

  constructor(
    private readonly telemetry: RegistrationTelemetry,
    parent: Context,
    resumed: boolean,
  ) {
    const { api } = telemetry;
    this.span = telemetry.tracer.startSpan(
      SPAN_NAMES.notification,
      {
        kind: resumed ? api.SpanKind.CONSUMER : api.SpanKind.INTERNAL,
        attributes: { [ATTRIBUTES.account]: telemetry.account },
      },
      parent,
    );
    this.context = api.trace.setSpan(parent, this.span);
  }

  validated(eventType: string): void {
    this.eventType = eventTypeBucket(eventType);
    this.span.setAttribute(ATTRIBUTES.eventType, this.eventType);
  }

  deduped(result: NotificationDedupeResult): void {
    this.span.setAttribute(ATTRIBUTES.dedupe, result);
  }

  /** Runs the handler inside its own span's context, so that the spans the handler starts nest under it. */
  runHandler<T>(handler: string, run: () => T): T {
    const { api, tracer, account } = this.telemetry;
    const attributes: Attributes = { [ATTRIBUTES.account]: account, [ATTRIBUTES.handler]: handler };
    if (this.eventType !== undefined) attributes[ATTRIBUTES.eventType] = this.eventType;
    const span = tracer.startSpan(`${SPAN_NAMES.handlerPrefix}${handler}`, { attributes }, this.context);
    const startedAt = performance.now();
    let result: T;
    try {
      result = api.context.with(api.trace.setSpan(this.context, span), run);
    } catch (error) {
      this.handlerEnded(span, attributes, startedAt, { error });
      throw error;
    }
    if (!isPromiseLike(result)) {
      this.handlerEnded(span, attributes, startedAt, undefined);
      return result;
    }
    return result.then(
      (value) => {
        this.handlerEnded(span, attributes, startedAt, undefined);
        return value;
      },
      (error: unknown) => {
        this.handlerEnded(span, attributes, startedAt, { error });
        throw error;
      },
    ) as T;
  }

  /** An event on the notification's span, and a count, for a handler not run again. */
  handlerSkipped(handler: string): void {
    const { account, instruments } = this.telemetry;
    this.span.addEvent(SPAN_NAMES.handlerSkippedEvent, { [ATTRIBUTES.handler]: handler });
    const attributes: Attributes = { [ATTRIBUTES.account]: account, [ATTRIBUTES.handler]: handler };
    if (this.eventType !== undefined) attributes[ATTRIBUTES.eventType] = this.eventType;
    instruments.handlerSkips.add(1, attributes);
  }

  carrier(): NotificationTraceCarrier {
    const carrier: Record<string, string> = {};
    this.telemetry.api.propagation.inject(this.context, carrier);
    return carrier;
  }

  end(outcome: NotificationOutcome): void {
    const { api, account, instruments } = this.telemetry;
    this.span.setAttribute(ATTRIBUTES.notificationOutcome, outcome);
    // A refused request is the sender's mistake, answered as it should be; only a failure to handle is an error.
    if (outcome === 'failed') this.span.setStatus({ code: api.SpanStatusCode.ERROR });
    this.span.end();
    const attributes: Attributes = { [ATTRIBUTES.account]: account, [ATTRIBUTES.notificationOutcome]: outcome };
    if (this.eventType !== undefined) attributes[ATTRIBUTES.eventType] = this.eventType;
    instruments.notificationDeliveries.add(1, attributes);
    instruments.notificationDuration.record((performance.now() - this.startedAt) / 1000, attributes);
  }

  /** Ends a handler's span, `ERROR` with the exception recorded when it threw, and records its duration. */
  private handlerEnded(
    span: Span,
    attributes: Attributes,
    startedAt: number,
    failure: { error: unknown } | undefined,
  ): void {
    const outcome = failure ? 'failed' : 'succeeded';
    span.setAttribute(ATTRIBUTES.handlerOutcome, outcome);
    if (failure) {
      span.recordException(exceptionWithoutMessage(failure.error));
      span.setStatus({ code: this.telemetry.api.SpanStatusCode.ERROR });
    }
    span.end();
    this.telemetry.instruments.handlerDuration.record((performance.now() - startedAt) / 1000, {
      ...attributes,
      [ATTRIBUTES.handlerOutcome]: outcome,
    });
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
