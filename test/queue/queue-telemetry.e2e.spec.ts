import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { PayoutsModule } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import { payoutsQueue } from 'nestjs-payouts/queue';
import {
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';
import { registerGlobalContext, traceHttpServer, useInMemoryTelemetry } from '../opentelemetry/in-memory-telemetry.js';
import { eventually } from '../support/eventually.js';
import { RedisServer } from '../support/redis-server.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { ACK, QueuedEvents, SECRET, uniqueQueueName } from './queue-test-app.js';

registerGlobalContext();

describeWithRedis('a notification traced from the route to the queue worker', () => {
  const telemetry = useInMemoryTelemetry();
  let redis: RedisServer;
  let running: NotificationsApp | undefined;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  const spansNamed = (name: string): ReadableSpan[] => telemetry.current.spans().filter((span) => span.name === name);

  it('continues the route trace in the worker: the worker span and its handler span share the trace id', async () => {
    const { tracerProvider, meterProvider } = telemetry.current;
    running = await startNotificationsApp({
      adapter: 'express',
      imports: [
        PayoutsModule.forRoot({
          baseUrl: 'http://127.0.0.1:9/v1',
          apiKey: 'test-api-key',
          accessToken: 'test-token',
          notifications: {
            verification: { secret: { value: SECRET } },
            dispatcher: payoutsQueue({
              connection: { host: '127.0.0.1', port: redis.port },
              queueName: uniqueQueueName(),
            }),
          },
          telemetry: payoutsOpenTelemetry({ tracerProvider, meterProvider }),
        }),
      ],
      providers: [QueuedEvents],
      configure: (app) => traceHttpServer(app.getHttpServer(), tracerProvider.getTracer('http')),
    });

    const reply = await post(running.url(`payouts/notifications?token=${SECRET}`), cardAdded());
    expect([reply.status, reply.body]).toEqual([200, ACK]);
    await eventually(
      async () => (spansNamed('payouts.notification').length === 2 ? true : undefined),
      10_000,
      'the worker span',
    );

    // The worker may finish before the route's reply is written: the spans are told apart by their outcome.
    const outcomeOf = (span: ReadableSpan) => span.attributes['payouts.notification.outcome'];
    const notifications = spansNamed('payouts.notification');
    expect(notifications.map(outcomeOf).sort()).toEqual(['acknowledged', 'enqueued']);
    const route = notifications.find((span) => outcomeOf(span) === 'enqueued');
    const worker = notifications.find((span) => outcomeOf(span) === 'acknowledged');
    expect(worker!.spanContext().traceId).toBe(route!.spanContext().traceId);
    const [handler] = telemetry.current.spans().filter((span) => span.name.startsWith('payouts.handler '));
    expect(handler!.parentSpanContext?.spanId).toBe(worker!.spanContext().spanId);
    expect(handler!.spanContext().traceId).toBe(route!.spanContext().traceId);
    expect(trace.getActiveSpan()).toBeUndefined();
    expect(running.app.get(QueuedEvents).runs).toHaveLength(1);
  });
});
