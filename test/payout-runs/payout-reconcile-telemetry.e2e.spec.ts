import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { getPayoutsHealthSourceToken, type PayoutsHealthSource } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import type { PayoutReconcileOptions } from 'nestjs-payouts/payout-runs';
import { MockFault, MockPayoutsApi } from 'nestjs-payouts/testing';
import { useInMemoryTelemetry } from '../opentelemetry/in-memory-telemetry.js';
import { documentedTable } from '../opentelemetry/documented-telemetry-tables.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { ACCESS_TOKEN, API_KEY, payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

describeWithRedis('the reconcile sweep counted with OpenTelemetry', () => {
  const telemetry = useInMemoryTelemetry();
  let redis: RedisServer;
  let mock: MockPayoutsApi | undefined;
  let started: RunsApp | undefined;
  /** The instances of a test that runs several, each closed once. */
  const instances = new Set<RunsApp>();
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    await started?.app.close();
    started = undefined;
    await Promise.all([...instances].map((instance) => instance.app.close()));
    instances.clear();
    await mock?.close();
    mock = undefined;
  });

  it('counts the lookups by answer and each payout given up on once, with no request id on a metric', async () => {
    const { tracerProvider, meterProvider } = telemetry.current;
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    // Every first POST loses its reply: committed, except the one the provider will say it never saw.
    mock.fail({ when: { method: 'POST', requestId: 'lk-absent' }, times: 1 }, MockFault.resetBeforeCommit());
    mock.fail(
      { when: (request) => request.method === 'POST' && request.requestId !== 'lk-absent' },
      MockFault.resetAfterCommit(),
    );
    const lookups = new Map<string, number>();
    const reconcile: PayoutReconcileOptions = {
      lookup: async (request, { signal }) => {
        const id = request.request_id;
        lookups.set(id, (lookups.get(id) ?? 0) + 1);
        if (id === 'lk-created') return 'created';
        if (id === 'lk-absent') return 'absent';
        if (id === 'lk-unknown') return 'unknown';
        // Its message must go nowhere: neither a log line nor a metric.
        if (id === 'lk-throws') throw new Error(`the status endpoint refused ${API_KEY}`);
        // Hangs past lookupTimeoutMs; its late answer is not acted upon.
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve('created'), { once: true }));
      },
      settleAfterMs: 0,
      sweepEveryMs: 200,
      lookupTimeoutMs: 200,
      giveUpAfterMs: 1000,
    };
    started = await startRunsApp(
      mock.baseUrl,
      {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: 'reconcile-otel',
        rateLimit: false,
        backoffMs: 20,
        reconcile,
      },
      { telemetry: payoutsOpenTelemetry({ tracerProvider, meterProvider }) },
    );
    const { logger, results, runs } = started;
    const ids = ['lk-created', 'lk-absent', 'lk-unknown', 'lk-throws', 'lk-hangs'];

    await runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'run-reconcile-otel' },
    );
    const givenUpLines = () => logger.lines.filter((line) => line.includes('after giveUpAfterMs'));
    const unknownLookupsAtGiveUp = await eventually(
      async () => (givenUpLines().length === 3 && results.sent.length === 2 ? lookups.get('lk-unknown') : undefined),
      30_000,
      'two payouts settled and three given up on',
    );
    // Two more sweeps after the last give-up: the payouts are looked up again, and not given up on again.
    await eventually(
      async () => ((lookups.get('lk-unknown') ?? 0) >= unknownLookupsAtGiveUp! + 2 ? true : undefined),
      30_000,
      'two more sweeps',
    );
    const source = started.app.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
    const figures = await source.figures!();
    const parked = (await runs.listUnknown()).payouts.map((item) => item.requestId).sort();
    // Closing waits for the sweep under way, so every lookup made is counted before the metrics are read.
    await started.app.close();
    started = undefined;
    const metrics = await telemetry.current.metrics();

    const points = (name: string) =>
      (metrics.get(name)?.dataPoints ?? [])
        .map((point) => [point.attributes, point.value] as const)
        .sort(([a], [b]) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const answer = (value: string) => ({ 'payouts.account': 'default', 'payouts.run.reconcile.answer': value });
    const failed = lookups.get('lk-throws')! + lookups.get('lk-hangs')!;
    // A payout parked a moment before its job ended may be looked up twice (the first answer finds it busy).
    expect(lookups.get('lk-created')).toBeGreaterThanOrEqual(1);
    expect(lookups.get('lk-absent')).toBeGreaterThanOrEqual(1);
    // Looked up at least once before the give-up, and in one whole sweep after it.
    expect(failed).toBeGreaterThanOrEqual(2 * 2);
    expect(points('payouts.run.reconcile.lookups')).toEqual([
      [answer('absent'), lookups.get('lk-absent')],
      [answer('created'), lookups.get('lk-created')],
      [answer('failed'), failed],
      [answer('unknown'), lookups.get('lk-unknown')],
    ]);
    expect(points('payouts.run.reconcile.given_up')).toEqual([[{ 'payouts.account': 'default' }, 3]]);
    expect(points('payouts.run.resolutions')).toEqual([
      [{ 'payouts.account': 'default', 'payouts.run.resolution': 'absent' }, 1],
      [{ 'payouts.account': 'default', 'payouts.run.resolution': 'sent' }, 1],
    ]);

    // The health check's figures tell the same story; the three stay parked, the hung lookup's late answer ignored.
    expect(parked).toEqual(['lk-hangs', 'lk-throws', 'lk-unknown']);
    expect(figures.parked).toBe(3);
    expect(figures.reconciled).toMatchObject({ created: 1, absent: 1, givenUp: 3 });
    expect(results.sent.map((result) => result.requestId).sort()).toEqual(['lk-absent', 'lk-created']);
    expect(
      mock.calls
        .filter((call) => call.committed)
        .map((call) => call.requestId)
        .sort(),
    ).toEqual(['lk-absent', 'lk-created', 'lk-hangs', 'lk-throws', 'lk-unknown']);

    // Each decision is in the log with its request id; the given-up error once per payout.
    expect(logger.lines).toContainEqual(
      expect.stringMatching(/^log: Payout lk-unknown of run run-reconcile-otel: the lookup answered unknown; it stays/),
    );
    expect(logger.lines).toContainEqual(
      expect.stringMatching(/^warn: Payout lk-throws of run run-reconcile-otel: the lookup threw Error; it stays/),
    );
    expect(logger.lines).toContainEqual(
      expect.stringMatching(
        /^warn: Payout lk-hangs of run run-reconcile-otel: the lookup did not answer within lookupTimeoutMs \(200 ms\)/,
      ),
    );
    expect(
      givenUpLines()
        .filter((line) => line.startsWith('error:'))
        .map((line) => /Payout (\S+) /.exec(line)![1])
        .sort(),
    ).toEqual(['lk-hangs', 'lk-throws', 'lk-unknown']);

    // The names and attribute keys are the README's.
    const documented = documentedTable('**Payout reconcile metrics**', 3);
    expect(
      new Map(
        [...documented.keys()].map((name) => [
          name,
          [...new Set(metrics.get(name)!.dataPoints.flatMap((point) => Object.keys(point.attributes)))].sort(),
        ]),
      ),
    ).toEqual(new Map([...documented].map(([name, keys]) => [name, [...keys].sort()])));
    expect([...documented.keys()].sort()).toEqual(['payouts.run.reconcile.given_up', 'payouts.run.reconcile.lookups']);

    // No request id, run id, credential or beneficiary on any metric; no credential in the log.
    const recorded = JSON.stringify([...metrics.values()].map((metric) => metric.dataPoints.map((p) => p.attributes)));
    for (const value of ['lk-', 'run-reconcile-otel', API_KEY, ACCESS_TOKEN, 'Jane Doe', '254712345678']) {
      expect(recorded).not.toContain(value);
    }
    mock.assertNoSecretIn(logger.lines);
    expect(logger.lines.join('\n')).not.toContain('the status endpoint refused');
  });

  it('gives up on each payout once across two instances, and not again after the first one stops', async () => {
    const { tracerProvider, meterProvider } = telemetry.current;
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    mock.fail({ when: { method: 'POST' } }, MockFault.resetAfterCommit());
    const ids = ['gu-1', 'gu-2', 'gu-3'];
    /** Lookups per instance and payout: the provider never knows. */
    const lookups = new Map<string, number>();
    const looked = (instance: string) => Math.min(...ids.map((id) => lookups.get(`${instance} ${id}`) ?? 0));
    const startInstance = async (instance: string) => {
      const reconcile: PayoutReconcileOptions = {
        lookup: (request) => {
          const key = `${instance} ${request.request_id}`;
          lookups.set(key, (lookups.get(key) ?? 0) + 1);
          return 'unknown';
        },
        settleAfterMs: 0,
        sweepEveryMs: 100,
        giveUpAfterMs: 1000,
      };
      const app = await startRunsApp(
        mock!.baseUrl,
        {
          connection: { host: '127.0.0.1', port: redis.port },
          prefix: 'reconcile-give-up',
          rateLimit: false,
          reconcile,
        },
        // One meter for both, as one metrics backend sums the instances of a service.
        { telemetry: payoutsOpenTelemetry({ tracerProvider, meterProvider }) },
      );
      instances.add(app);
      return app;
    };
    const first = await startInstance('first');
    const second = await startInstance('second');
    const givenUpErrors = () =>
      [...first.logger.lines, ...second.logger.lines]
        .filter((line) => line.startsWith('error:') && line.includes('after giveUpAfterMs'))
        .map((line) => /Payout (\S+) /.exec(line)![1])
        .sort();
    const givenUpFigure = async (instance: RunsApp) =>
      (await instance.app.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs')).figures!())
        .reconciled!.givenUp;
    // Two more sweeps of every payout by `instance` than now: at least one began after what happened before.
    const twoMoreSweeps = async (instance: string) => {
      const now = looked(instance);
      await eventually(
        async () => (looked(instance) >= now + 2 ? true : undefined),
        30_000,
        `two sweeps of ${instance}`,
      );
    };

    await first.runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'run-give-up' },
    );
    await eventually(
      async () => (new Set(givenUpErrors()).size === ids.length ? true : undefined),
      30_000,
      'every payout is given up on',
    );
    // Both instances sweep (the lock lets one at a time) after the give-up.
    await Promise.all([twoMoreSweeps('first'), twoMoreSweeps('second')]);
    const firstGivenUp = await givenUpFigure(first);
    instances.delete(first);
    await first.app.close();
    // The second one sweeps alone now.
    await twoMoreSweeps('second');
    const secondGivenUp = await givenUpFigure(second);
    const parked = (await second.runs.listUnknown()).total;
    instances.delete(second);
    await second.app.close();
    const metrics = await telemetry.current.metrics();

    expect(givenUpErrors()).toEqual(ids);
    expect(firstGivenUp + secondGivenUp).toBe(ids.length);
    expect(metrics.get('payouts.run.reconcile.given_up')!.dataPoints.map((point) => point.value)).toEqual([ids.length]);
    expect(parked).toBe(ids.length);
    expect(mock.payouts.size).toBe(ids.length);
  });
});
