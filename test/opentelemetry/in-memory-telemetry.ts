import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach } from 'vitest';

/**
 * What an app's OpenTelemetry SDK sets up globally: a context manager on AsyncLocalStorage (so contexts follow
 * `await`) and the W3C trace context propagator. Each test file runs in its own worker, so this stays in the file.
 */
export function registerGlobalContext(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  afterAll(() => {
    context.disable();
    propagation.disable();
  });
}

/** The OpenTelemetry SDK with in-memory exporters: every finished span, and the metrics on demand. */
export class InMemoryTelemetry {
  private readonly spanExporter = new InMemorySpanExporter();
  private readonly metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  private readonly metricReader = new PeriodicExportingMetricReader({
    exporter: this.metricExporter,
    // Exported only when a test asks (forceFlush), never on a timer.
    exportIntervalMillis: 3_600_000,
  });
  readonly tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(this.spanExporter)] });
  readonly meterProvider = new MeterProvider({ readers: [this.metricReader] });

  /** The spans ended so far, in the order they ended. */
  spans(): ReadableSpan[] {
    return this.spanExporter.getFinishedSpans();
  }

  /** The metrics recorded so far, cumulative, by name. */
  async metrics(): Promise<Map<string, MetricData>> {
    this.metricExporter.reset();
    await this.metricReader.forceFlush();
    const exported = this.metricExporter.getMetrics().flatMap(({ scopeMetrics }) => scopeMetrics);
    return new Map(exported.flatMap(({ metrics }) => metrics).map((metric) => [metric.descriptor.name, metric]));
  }

  async shutdown(): Promise<void> {
    await Promise.all([this.tracerProvider.shutdown(), this.meterProvider.shutdown()]);
  }
}

/** A fresh `InMemoryTelemetry` for each test, shut down after it. */
export function useInMemoryTelemetry(): { current: InMemoryTelemetry } {
  const holder = { current: new InMemoryTelemetry() };
  afterEach(async () => {
    await holder.current.shutdown();
    holder.current = new InMemoryTelemetry();
  });
  return holder;
}

/**
 * Gives each request to `server` a SERVER span and runs the framework inside its context, with the request and
 * response bound to it, as an HTTP instrumentation does, so the spans of the route nest under it.
 */
export function traceHttpServer(server: Server, tracer: Tracer): void {
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const span = tracer.startSpan(`${request.method} server`, { kind: SpanKind.SERVER }, ROOT_CONTEXT);
    const active = trace.setSpan(ROOT_CONTEXT, span);
    response.on('finish', () => span.end());
    context.with(active, () => {
      context.bind(active, request);
      context.bind(active, response);
      for (const listener of listeners) listener.call(server, request, response);
    });
  });
}
