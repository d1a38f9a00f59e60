import { setImmediate as nextTurn } from 'node:timers/promises';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { HistogramMetricData, SumMetricData } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutsModule } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import { AuditTrail, CardEvents } from '../notifications/notification-handlers.fixture.js';
import {
  ADAPTERS,
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';
import { registerGlobalContext, traceHttpServer, useInMemoryTelemetry } from './in-memory-telemetry.js';

const SECRET = 'notification-secret-7Qw2rT9x';

registerGlobalContext();

describe.each(ADAPTERS)('notification spans and metrics on %s', (adapter) => {
  const telemetry = useInMemoryTelemetry();
  let running: NotificationsApp | undefined;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(): Promise<NotificationsApp> {
    const { tracerProvider, meterProvider } = telemetry.current;
    running = await startNotificationsApp({
      adapter,
      imports: [
        PayoutsModule.forRoot({
          baseUrl: 'http://127.0.0.1:9/v1',
          apiKey: 'test-api-key',
          accessToken: 'test-token',
          notifications: { verification: { secret: { value: SECRET } } },
          telemetry: payoutsOpenTelemetry({ tracerProvider, meterProvider }),
        }),
      ],
      providers: [CardEvents, AuditTrail],
      configure: (app) => traceHttpServer(app.getHttpServer(), tracerProvider.getTracer('http')),
    });
    return running;
  }

  const deliver = (body: unknown = cardAdded(), token = SECRET) =>
    post(running!.url(`payouts/notifications?token=${token}`), body);
  const spansNamed = (prefix: string) => telemetry.current.spans().filter((span) => span.name.startsWith(prefix));
  const only = (prefix: string): ReadableSpan => {
    const spans = spansNamed(prefix);
    expect(spans.map((span) => span.name)).toHaveLength(1);
    return spans[0]!;
  };
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

  it('gives one delivery one span under the HTTP server span, with a child span per handler', async () => {
    await start();
    const reply = await deliver();

    expect(reply.status).toBe(200);
    const server = only('POST server');
    const notification = only('payouts.notification');
    expect(parentOf(notification)).toBe(server.spanContext().spanId);
    expect(notification.spanContext().traceId).toBe(server.spanContext().traceId);
    expect(notification.kind).toBe(SpanKind.INTERNAL);
    expect(notification.attributes).toEqual({
      'payouts.account': 'default',
      'payouts.notification.event_type': 'PAYMENT_METHOD_ADDED',
      'payouts.notification.dedupe': 'claimed',
      'payouts.notification.outcome': 'acknowledged',
    });
    expect(notification.status.code).toBe(SpanStatusCode.UNSET);
    const handlers = spansNamed('payouts.handler ');
    expect(handlers.map((span) => span.name).sort()).toEqual([
      'payouts.handler AuditTrail.record',
      'payouts.handler CardEvents.added',
    ]);
    for (const span of handlers) {
      expect(parentOf(span)).toBe(notification.spanContext().spanId);
      expect(span.attributes).toMatchObject({
        'payouts.account': 'default',
        'payouts.notification.event_type': 'PAYMENT_METHOD_ADDED',
        'payouts.handler.outcome': 'succeeded',
      });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    }
  });

  it("runs a handler inside its span's context, so the spans it starts nest under it, across an await", async () => {
    const app = await start();
    const tracer = telemetry.current.tracerProvider.getTracer('app');
    app.app.get(CardEvents).behaviour = async () => {
      await nextTurn();
      tracer.startSpan('INSERT cards').end();
    };

    await deliver();

    const handler = only('payouts.handler CardEvents.added');
    expect(parentOf(only('INSERT cards'))).toBe(handler.spanContext().spanId);
  });

  it('marks a failing handler ERROR with the exception recorded, and the notification failed', async () => {
    const app = await start();
    class CardStoreError extends Error {
      override name = 'CardStoreError';
    }
    app.app.get(CardEvents).behaviour = async () => {
      await nextTurn();
      throw new CardStoreError('the card store is down');
    };

    const reply = await deliver();

    expect(reply.status).toBe(500);
    const failed = only('payouts.handler CardEvents.added');
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(failed.attributes['payouts.handler.outcome']).toBe('failed');
    expect(failed.events.map((event) => event.name)).toEqual(['exception']);
    const exception = failed.events[0]!.attributes!;
    expect(exception['exception.type']).toBe('CardStoreError');
    expect(String(exception['exception.stacktrace'])).toMatch(/^CardStoreError\n\s+at /);
    expect(only('payouts.handler AuditTrail.record').status.code).toBe(SpanStatusCode.UNSET);
    const notification = only('payouts.notification');
    expect(notification.attributes['payouts.notification.outcome']).toBe('failed');
    expect(notification.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("keeps none of a failing handler's message in the stack trace, even lines of it that read like frames", async () => {
    const app = await start();
    app.app.get(CardEvents).behaviour = () => {
      throw new Error('duplicate key\n    at x (y.js:1:1) shopper@example.com\n    at z (w.js:2:2)');
    };

    await deliver();

    const stack = String(only('payouts.handler CardEvents.added').events[0]!.attributes!['exception.stacktrace']);
    expect(stack).toMatch(/^Error\n\s+at /);
    for (const leaked of ['duplicate key', 'shopper@example.com', 'y.js', 'w.js']) expect(stack).not.toContain(leaked);
    expect(
      stack
        .split('\n')
        .slice(1)
        .every((line) => /^\s+at /.test(line)),
    ).toBe(true);
    expect(stack).toContain('notification-telemetry.e2e.spec.ts');
  });

  it('records a duplicate and a refused request without handler spans', async () => {
    await start();
    const body = cardAdded();
    await deliver(body);
    telemetry.current.spans().length = 0;

    expect((await deliver(body)).status).toBe(200);
    expect((await deliver(cardAdded(), 'wrong-token')).status).toBe(401);

    const [duplicate, refused] = spansNamed('payouts.notification');
    expect(duplicate!.attributes).toEqual({
      'payouts.account': 'default',
      'payouts.notification.event_type': 'PAYMENT_METHOD_ADDED',
      'payouts.notification.dedupe': 'handled',
      'payouts.notification.outcome': 'duplicate',
    });
    expect(refused!.attributes).toEqual({
      'payouts.account': 'default',
      'payouts.notification.outcome': 'unauthorized',
    });
    expect(refused!.status.code).toBe(SpanStatusCode.UNSET);
    expect(spansNamed('payouts.handler ')).toEqual([]);
  });

  it('counts deliveries by outcome and times them and their handlers', async () => {
    await start();
    await deliver();
    await deliver(cardAdded({ eventType: 'PAYMENT_METHOD_EXPIRED' }));
    await deliver(cardAdded(), 'wrong-token');

    const metrics = await telemetry.current.metrics();
    const deliveries = metrics.get('payouts.notification.deliveries') as SumMetricData;
    expect(deliveries.descriptor).toMatchObject({ unit: '{delivery}' });
    expect(deliveries.dataPoints.map(({ attributes, value }) => ({ attributes, value }))).toEqual(
      expect.arrayContaining([
        {
          attributes: {
            'payouts.account': 'default',
            'payouts.notification.event_type': 'PAYMENT_METHOD_ADDED',
            'payouts.notification.outcome': 'acknowledged',
          },
          value: 1,
        },
        {
          attributes: {
            'payouts.account': 'default',
            'payouts.notification.event_type': 'other',
            'payouts.notification.outcome': 'acknowledged',
          },
          value: 1,
        },
        { attributes: { 'payouts.account': 'default', 'payouts.notification.outcome': 'unauthorized' }, value: 1 },
      ]),
    );
    expect(deliveries.dataPoints).toHaveLength(3);
    const duration = metrics.get('payouts.notification.duration') as HistogramMetricData;
    expect(duration.descriptor.unit).toBe('s');
    expect(duration.dataPoints.reduce((sum, point) => sum + point.value.count, 0)).toBe(3);
    const handlerDuration = metrics.get('payouts.notification.handler.duration') as HistogramMetricData;
    const handlerRuns = handlerDuration.dataPoints.map(
      ({ attributes, value }) =>
        `${attributes['payouts.notification.event_type']} ${attributes['payouts.handler.name']} ${value.count}`,
    );
    // The catch-all handler also took the unknown event type; the card handler did not.
    expect(handlerRuns.sort()).toEqual([
      'PAYMENT_METHOD_ADDED AuditTrail.record 1',
      'PAYMENT_METHOD_ADDED CardEvents.added 1',
      'other AuditTrail.record 1',
    ]);
  });

  it('leaves the trace of the app untouched when no span is active', async () => {
    await start();
    expect(trace.getActiveSpan()).toBeUndefined();
    await deliver();
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
