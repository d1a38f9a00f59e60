import { context, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { getPayoutsServiceToken, type PayoutsPayoutRunJobEvent, type PayoutsService } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import { registerGlobalContext, useInMemoryTelemetry } from '../opentelemetry/in-memory-telemetry.js';
import { documentedTable } from '../opentelemetry/documented-telemetry-tables.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { ACCESS_TOKEN, API_KEY, payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

registerGlobalContext();

describeWithRedis('payout runs traced and counted with OpenTelemetry', () => {
  const telemetry = useInMemoryTelemetry();
  let redis: RedisServer;
  let provider: MockPayoutsProvider | undefined;
  let started: RunsApp | undefined;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    await started?.app.close();
    started = undefined;
    await provider?.close();
    provider = undefined;
  });

  const spansNamed = (name: string): ReadableSpan[] => telemetry.current.spans().filter((span) => span.name === name);

  it('records a span per job attempt in the trace of the enqueue, the outcomes, the completed run and the decisions', async () => {
    const { tracerProvider, meterProvider } = telemetry.current;
    provider = await MockPayoutsProvider.start(
      (requestId, seenBefore) =>
        requestId === 'ot-refused'
          ? { kind: 'refused', status: 400 }
          : requestId === 'ot-unknown' && seenBefore === 0
            ? { kind: 'reset' }
            : requestId === 'ot-sent' && seenBefore === 0
              ? { kind: 'throttled', status: 429, retryAfterSeconds: 0 }
              : { kind: 'created' },
      { minLatencyMs: 5, maxLatencyMs: 15 },
    );
    started = await startRunsApp(
      provider.baseUrl,
      { connection: { host: '127.0.0.1', port: redis.port }, prefix: 'runs-otel', rateLimit: false, backoffMs: 20 },
      { telemetry: payoutsOpenTelemetry({ tracerProvider, meterProvider }) },
    );
    const events: PayoutsPayoutRunJobEvent[] = [];
    started.app.get<PayoutsService>(getPayoutsServiceToken()).on('payoutRunJob', (event) => events.push(event));

    const parent = tracerProvider.getTracer('app').startSpan('month-end');
    // Enqueued inside the app's span: the jobs' spans join its trace.
    await context.with(trace.setSpan(context.active(), parent), () =>
      started!.runs.enqueue([payout('ot-sent'), payout('ot-refused'), payout('ot-unknown')], { runId: 'otel-run' }),
    );
    parent.end();
    await eventually(
      async () => ((await started!.runs.progress('otel-run'))?.completedAt && events.length === 4 ? true : undefined),
      15_000,
      'the run completes',
    );

    const jobs = spansNamed('payouts.run.payout');
    const outcomeOf = (span: ReadableSpan) => span.attributes['payouts.run.outcome'];
    expect(
      jobs
        .map((span) => [span.attributes['payouts.payout.request_id'], outcomeOf(span), span.attributes['error.type']])
        .sort(),
    ).toEqual([
      ['ot-refused', 'refused', undefined],
      ['ot-sent', 'retrying', 'RateLimitError'],
      ['ot-sent', 'sent', undefined],
      ['ot-unknown', 'unknown', undefined],
    ]);
    for (const job of jobs) {
      expect(job.spanContext().traceId).toBe(parent.spanContext().traceId);
      expect(job.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      expect(job.attributes).toMatchObject({
        'payouts.account': 'default',
        'payouts.run.id': 'otel-run',
        'payouts.payout.attempt': 1,
      });
    }
    // The payout's call nests under its job's span.
    const calls = spansNamed('payouts.create_payout');
    expect(calls).toHaveLength(4);
    for (const call of calls) {
      const job = jobs.find((span) => span.spanContext().spanId === call.parentSpanContext?.spanId);
      expect(job?.attributes['payouts.payout.request_id']).toBe(call.attributes['payouts.payout.request_id']);
    }
    expect(events.map((event) => [event.requestId, event.outcome, event.attempt, event.rejection]).sort()).toEqual([
      ['ot-refused', 'refused', 1, undefined],
      // A 429 pause uses up no attempt.
      ['ot-sent', 'retrying', 1, 'RateLimitError'],
      ['ot-sent', 'sent', 1, undefined],
      ['ot-unknown', 'unknown', 1, undefined],
    ]);
    expect(events.every((event) => event.account === 'default' && event.runId === 'otel-run')).toBe(true);

    await started.untilJobsCompleted(['ot-unknown']);
    expect(await started.runs.resolveUnknown('ot-unknown', 'absent', { by: 'ops@example.com' })).toBe('resolved');
    await eventually(async () => (events.length === 5 ? true : undefined), 15_000, 'the payout sent again');

    const metrics = await telemetry.current.metrics();
    const points = (name: string) =>
      metrics.get(name)!.dataPoints.map((point) => [point.attributes, point.value] as const);
    expect(points('payouts.run.payouts')).toEqual(
      expect.arrayContaining([
        [{ 'payouts.account': 'default', 'payouts.run.outcome': 'sent' }, 2],
        [{ 'payouts.account': 'default', 'payouts.run.outcome': 'refused' }, 1],
        [{ 'payouts.account': 'default', 'payouts.run.outcome': 'unknown' }, 1],
        [{ 'payouts.account': 'default', 'payouts.run.outcome': 'retrying' }, 1],
      ]),
    );
    expect(points('payouts.run.payouts')).toHaveLength(4);
    expect(points('payouts.run.completions')).toEqual([[{ 'payouts.account': 'default' }, 1]]);
    expect(points('payouts.run.resolutions')).toEqual([
      [{ 'payouts.account': 'default', 'payouts.run.resolution': 'absent' }, 1],
    ]);

    // The names and attribute keys are those of docs/observability.md.
    const spanKeys = [...new Set(jobs.flatMap((span) => Object.keys(span.attributes)))].sort();
    expect(spanKeys).toEqual([...documentedTable('**Payout run spans**', 3).get('payouts.run.payout')!].sort());
    const documentedMetrics = documentedTable('**Payout run metrics**', 3);
    expect(
      new Map(
        [...documentedMetrics.keys()].map((name) => [
          name,
          [...new Set(metrics.get(name)!.dataPoints.flatMap((point) => Object.keys(point.attributes)))].sort(),
        ]),
      ),
    ).toEqual(new Map([...documentedMetrics].map(([name, keys]) => [name, [...keys].sort()])));

    // Nothing of the credentials nor of the beneficiary in any span or metric attribute.
    const recorded = JSON.stringify([
      telemetry.current.spans().map((span) => [span.attributes, span.events.map((event) => event.attributes)]),
      [...metrics.values()].map((metric) => metric.dataPoints.map((point) => point.attributes)),
    ]);
    for (const secret of [API_KEY, ACCESS_TOKEN, 'Jane Doe', '254712345678']) expect(recorded).not.toContain(secret);
  });

  it('stores no trace context in the job when nothing records traces', async () => {
    provider = await MockPayoutsProvider.start(() => ({ kind: 'created' }), { minLatencyMs: 5, maxLatencyMs: 15 });
    started = await startRunsApp(provider.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix: 'runs-no-otel',
      rateLimit: false,
      worker: false,
    });
    await started.runs.enqueue([payout('plain-1')], { runId: 'plain' });

    const [job] = await started.runs.queue.getJobs(['waiting']);
    expect(Object.keys(job!.data as object).sort()).toEqual(['request', 'runId']);
  });
});
