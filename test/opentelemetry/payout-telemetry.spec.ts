import { Agent, type ClientRequestArgs } from 'node:http';
import type { Duplex } from 'node:stream';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { HistogramMetricData, SumMetricData } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { PayoutsModuleOptions } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import { MockFault } from 'nestjs-payouts/testing';
import { refusingBaseUrl } from '../payouts/payouts-api-stub.js';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { startPayoutsAppFor, useMockPayoutsTestbed } from '../payouts/payouts-test-app.js';
import { registerGlobalContext, useInMemoryTelemetry } from './in-memory-telemetry.js';

registerGlobalContext();

/** Notes which span was active when each connection was opened: where an HTTP client instrumentation would nest. */
class SpanRecordingAgent extends Agent {
  readonly activeSpans: (string | undefined)[] = [];

  override createConnection(
    options: ClientRequestArgs,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    this.activeSpans.push(trace.getActiveSpan()?.spanContext().spanId);
    return super.createConnection(options, callback);
  }
}

describe('createPayout spans and metrics', () => {
  const testbed = useMockPayoutsTestbed();
  const telemetry = useInMemoryTelemetry();

  const start = (overrides: Partial<PayoutsModuleOptions> = {}, baseUrl = testbed.mock.baseUrl) => {
    const { tracerProvider, meterProvider } = telemetry.current;
    return startPayoutsAppFor(baseUrl, {
      telemetry: payoutsOpenTelemetry({ tracerProvider, meterProvider }),
      ...overrides,
    }).then((started) => (testbed.started = started));
  };
  const payoutSpan = (): ReadableSpan => {
    const spans = telemetry.current.spans();
    expect(spans.map((span) => span.name)).toEqual(['payouts.create_payout']);
    return spans[0]!;
  };
  const points = async (name: string) => {
    const metric = (await telemetry.current.metrics()).get(name) as SumMetricData | undefined;
    return (metric?.dataPoints ?? []).map(({ attributes, value }) => ({ attributes, value }));
  };

  it('gives a payout answered 503 then 201 one span with 2 attempts, and counts one retry', async () => {
    testbed.mock.fail({ times: 1 }, MockFault.status(503, { error: 'busy' }));
    const { payouts } = await start();

    await payouts.createPayout(walletPayoutRequest('req_503_then_201'));

    const span = payoutSpan();
    expect(span.attributes).toEqual({
      'payouts.account': 'default',
      'payouts.payout.request_id': 'req_503_then_201',
      'payouts.payout.outcome': 'created',
      'payouts.payout.attempts': 2,
      'http.response.status_code': 201,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.events.map(({ name, attributes }) => ({ name, attributes }))).toEqual([
      { name: 'payouts.payout.retry', attributes: { 'payouts.payout.attempt': 1, 'error.type': '503' } },
    ]);
    expect(await points('payouts.payout.retries')).toEqual([
      { attributes: { 'payouts.account': 'default', 'error.type': '503' }, value: 1 },
    ]);
    expect(await points('payouts.payout.requests')).toEqual([
      { attributes: { 'payouts.account': 'default', 'payouts.payout.outcome': 'created' }, value: 1 },
    ]);
    const duration = (await telemetry.current.metrics()).get('payouts.payout.duration') as HistogramMetricData;
    expect(duration.descriptor.unit).toBe('s');
    expect(duration.dataPoints.map(({ value }) => value.count)).toEqual([1]);
  });

  it("sends every attempt inside the payout's span, where an HTTP client instrumentation nests its spans", async () => {
    testbed.mock.fail({ times: 1 }, MockFault.status(503, {}));
    const httpAgent = new SpanRecordingAgent();
    const { payouts } = await start({ httpAgent });

    await payouts.createPayout(walletPayoutRequest());

    const spanId = payoutSpan().spanContext().spanId;
    expect(httpAgent.activeSpans.length).toBeGreaterThanOrEqual(1);
    expect(httpAgent.activeSpans.every((active) => active === spanId)).toBe(true);
    httpAgent.destroy();
  });

  it('records a rejection with its status as error.type', async () => {
    testbed.mock.fail({}, MockFault.status(422, { error: 'invalid phone number' }));
    const { payouts } = await start();

    await expect(payouts.createPayout(walletPayoutRequest('req_422'))).rejects.toMatchObject({ status: 422 });

    const span = payoutSpan();
    expect(span.attributes).toMatchObject({
      'payouts.payout.outcome': 'rejected',
      'payouts.payout.attempts': 1,
      'http.response.status_code': 422,
      'error.type': '422',
    });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(await points('payouts.payout.requests')).toEqual([
      {
        attributes: { 'payouts.account': 'default', 'payouts.payout.outcome': 'rejected', 'error.type': '422' },
        value: 1,
      },
    ]);
  });

  it('records a payouts API that cannot be reached as network_error, each retry by its code', async () => {
    const { payouts } = await start({}, await refusingBaseUrl());

    await expect(payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    expect(payoutSpan().attributes).toMatchObject({
      'payouts.payout.outcome': 'network_error',
      'payouts.payout.attempts': 3,
      'error.type': 'ECONNREFUSED',
    });
    expect(payoutSpan().attributes).not.toHaveProperty('http.response.status_code');
    expect(await points('payouts.payout.retries')).toEqual([
      { attributes: { 'payouts.account': 'default', 'error.type': 'ECONNREFUSED' }, value: 2 },
    ]);
  });

  it('records a reply that never came as unknown', async () => {
    // Longer than the test runs: the mock drops the answer when it closes.
    testbed.mock.fail({}, MockFault.latency(600_000));
    const { payouts } = await start({ timeoutMs: 100 });

    await expect(payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ code: 'ETIMEDOUT' });

    expect(payoutSpan().attributes).toMatchObject({
      'payouts.payout.outcome': 'unknown',
      'payouts.payout.attempts': 1,
      'error.type': 'ETIMEDOUT',
    });
  });

  it('records a call that could not send any attempt as not_sent, with the error class', async () => {
    const { payouts } = await start({
      accessToken: () => {
        throw new Error('the token service is down');
      },
    });

    await expect(payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({
      name: 'PayoutsAccessTokenError',
    });

    expect(payoutSpan().attributes).toMatchObject({
      'payouts.payout.outcome': 'not_sent',
      'payouts.payout.attempts': 0,
      'error.type': 'PayoutsAccessTokenError',
    });
    expect(testbed.mock.calls).toHaveLength(0);
  });

  it('makes no span nor metric for request() calls, which the HTTP client instrumentation covers', async () => {
    testbed.mock.fail({}, MockFault.status(200, { id: 'po_1' }));
    const { payouts } = await start();

    await payouts.request({ method: 'GET', path: '/payouts/{id}', params: { id: 'po_1' } });

    expect(telemetry.current.spans()).toEqual([]);
    expect(await points('payouts.payout.requests')).toEqual([]);
  });
});
