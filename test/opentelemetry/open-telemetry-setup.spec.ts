import { context, metrics, SpanKind, trace } from '@opentelemetry/api';
import type { SumMetricData } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { startPayoutsAppFor, usePayoutsTestbed } from '../payouts/payouts-test-app.js';
import { registerGlobalContext, useInMemoryTelemetry } from './in-memory-telemetry.js';

registerGlobalContext();

describe('payoutsOpenTelemetry() options', () => {
  it.each([
    [null, 'options', 'an object with tracerProvider and meterProvider, or nothing'],
    [{ traceProvider: {} }, 'traceProvider', 'a known option name (did you mean "tracerProvider"?)'],
    [{ tracerProvider: { secret: 'sk_live_x' } }, 'tracerProvider', 'a TracerProvider (with getTracer)'],
    [{ meterProvider: 'sk_live_x' }, 'meterProvider', 'a MeterProvider (with getMeter)'],
  ])('refuses %j, naming the option and never its value', (options, option, expected) => {
    const call = () => payoutsOpenTelemetry(options as never);

    expect(call).toThrow(PayoutsConfigError);
    expect(call).toThrow(`payoutsOpenTelemetry() option "${option}" is invalid: expected ${expected}.`);
  });

  it('fails the bootstrap when the telemetry option is not what payoutsOpenTelemetry() returns', async () => {
    const error = await startPayoutsAppFor('http://127.0.0.1:9', { telemetry: {} as never }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsConfigError);
    expect(error).toMatchObject({ option: 'telemetry' });
    expect((error as Error).message).toBe(
      'PayoutsModule option "telemetry" is invalid: expected the result of payoutsOpenTelemetry() ' +
        '(nestjs-payouts/opentelemetry).',
    );
  });
});

describe('payoutsOpenTelemetry() without providers', () => {
  const testbed = usePayoutsTestbed();
  const telemetry = useInMemoryTelemetry();

  it('records to the global providers the SDK registered', async () => {
    trace.setGlobalTracerProvider(telemetry.current.tracerProvider);
    metrics.setGlobalMeterProvider(telemetry.current.meterProvider);
    try {
      testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { telemetry: payoutsOpenTelemetry() });
      await testbed.started.payouts.createPayout(walletPayoutRequest());
    } finally {
      trace.disable();
      metrics.disable();
    }

    const [span] = telemetry.current.spans();
    expect(span).toMatchObject({
      name: 'payouts.create_payout',
      instrumentationScope: { name: 'nestjs-payouts', version: expect.stringMatching(/^\d+\.\d+\.\d+/) },
    });
    const requests = (await telemetry.current.metrics()).get('payouts.payout.requests') as SumMetricData;
    expect(requests.dataPoints.map(({ value }) => value)).toEqual([1]);
  });
});

describe('one payoutsOpenTelemetry() for several registrations, and a trace carried to a worker', () => {
  const telemetry = useInMemoryTelemetry();
  const instrumentFor = (account: string) => {
    const { tracerProvider, meterProvider } = telemetry.current;
    return payoutsOpenTelemetry({ tracerProvider, meterProvider }).instrument({ account });
  };

  it('records each registration under its own account', async () => {
    const { tracerProvider, meterProvider } = telemetry.current;
    const shared = payoutsOpenTelemetry({ tracerProvider, meterProvider });
    for (const account of ['eu', 'us', 'us']) shared.instrument({ account }).startNotification().end('unauthorized');

    const deliveries = (await telemetry.current.metrics()).get('payouts.notification.deliveries') as SumMetricData;
    expect(deliveries.dataPoints.map(({ attributes, value }) => [attributes['payouts.account'], value])).toEqual([
      ['eu', 1],
      ['us', 2],
    ]);
  });

  it("continues the route's trace in the worker from the carrier stored with the notification", () => {
    const instrumentation = instrumentFor('eu');
    const route = instrumentation.startNotification();
    route.validated('PAYMENT_METHOD_ADDED');
    const carrier = route.carrier();
    route.end('enqueued');

    const worker = instrumentation.resumeNotification(carrier);
    worker.validated('PAYMENT_METHOD_ADDED');
    worker.deduped('claimed');
    worker.runHandler('CardEvents.added', () => undefined);
    worker.end('acknowledged');

    expect(Object.keys(carrier)).toEqual(['traceparent']);
    const [enqueued, handler, handled] = telemetry.current.spans();
    expect(enqueued!.attributes['payouts.notification.outcome']).toBe('enqueued');
    expect(handled).toMatchObject({ name: 'payouts.notification', kind: SpanKind.CONSUMER });
    expect(handled!.attributes['payouts.notification.outcome']).toBe('acknowledged');
    expect(handled!.spanContext().traceId).toBe(enqueued!.spanContext().traceId);
    expect(handled!.parentSpanContext?.spanId).toBe(enqueued!.spanContext().spanId);
    expect(handler!.parentSpanContext?.spanId).toBe(handled!.spanContext().spanId);
  });

  it('starts a trace of its own in the worker when nothing was carried', () => {
    const worker = instrumentFor('eu').resumeNotification({});
    worker.end('acknowledged');

    const [span] = telemetry.current.spans();
    expect(span!.parentSpanContext).toBeUndefined();
    expect(trace.getSpan(context.active())).toBeUndefined();
  });
});
