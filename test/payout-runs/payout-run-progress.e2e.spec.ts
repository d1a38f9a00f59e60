import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { PayoutsModule } from 'nestjs-payouts';
import {
  OnPayoutRunProgress,
  type PayoutRunProgressReport,
  PayoutRunsModule,
  PayoutRunsService,
} from 'nestjs-payouts/payout-runs';
import { MockPayoutsApi } from 'nestjs-payouts/testing';
import { RecordingLogger } from '../recording-logger.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { ACCESS_TOKEN, API_KEY, payout } from './payout-runs-test-app.js';

@Injectable()
class ProgressScreen {
  readonly reports: PayoutRunProgressReport[] = [];
  failures = 0;

  @OnPayoutRunProgress()
  shown(report: PayoutRunProgressReport): void {
    this.reports.push(report);
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('the screen is away');
    }
  }
}

describeWithRedis('@OnPayoutRunProgress() on a real run against the mock payouts API', () => {
  let redis: RedisServer;
  let api: MockPayoutsApi;
  let prefixes = 0;
  const closing: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.close();
  });
  afterEach(async () => {
    for (const app of closing.splice(0)) await app.close();
    await api?.close();
  });

  const start = async (failures = 0) => {
    // Slow enough replies that the run is seen under way, not only done.
    api = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN, latencyMs: 20 });
    @Module({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: api.baseUrl,
          apiKey: API_KEY,
          accessToken: ACCESS_TOKEN,
          notifications: false,
        }),
        PayoutRunsModule.forRoot({
          connection: { host: '127.0.0.1', port: redis.port },
          prefix: `progress${++prefixes}`,
          rateLimit: false,
          concurrency: 2,
          progressIntervalMs: 100,
        }),
      ],
      providers: [ProgressScreen],
    })
    class ProgressAppModule {}
    const logger = new RecordingLogger();
    const app = await NestFactory.createApplicationContext(ProgressAppModule, { logger, abortOnError: false });
    closing.push(app);
    const screen = app.get(ProgressScreen);
    screen.failures = failures;
    return { runs: app.get(PayoutRunsService), screen, logger };
  };

  const ids = Array.from({ length: 12 }, (_, index) => `p-${index}`);

  it('reports each change of the counts while the run goes, then once when it completes', async () => {
    const { runs, screen, logger } = await start();

    await runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'watched' },
    );
    await eventually(
      async () => (screen.reports.some((report) => report.completedAt) ? true : undefined),
      20_000,
      'the last report',
    );

    expect(logger.messages('log')).toContain("Account 'default': run progress goes to ProgressScreen.shown");
    const { reports } = screen;
    const last = reports.at(-1)!;
    expect(last).toMatchObject({
      account: 'default',
      runId: 'watched',
      counts: { queued: 0, sending: 0, retrying: 0, sent: 12, refused: 0, unknown: 0, total: 12 },
    });
    expect(last.completedAt).toBeInstanceOf(Date);
    expect(reports.filter((report) => report.completedAt)).toHaveLength(1);
    expect(reports.every((report) => report.runId === 'watched' && report.counts.total === 12)).toBe(true);
    // Never the same counts twice in a row but for the last, which says the run completed.
    const shown = reports.slice(0, -1).map((report) => JSON.stringify(report.counts));
    expect(new Set(shown).size).toBe(shown.length);
    // Sent only grows.
    const sent = reports.map((report) => report.counts.sent);
    expect(sent).toEqual([...sent].sort((a, b) => a - b));
    expect(api.calls.filter((call) => call.status === 201)).toHaveLength(12);
  });

  it('logs a handler that throws and reports on: progress is told, never retried', async () => {
    const { runs, screen, logger } = await start(1);
    const completed = (runId: string) =>
      eventually(
        async () => (screen.reports.some((report) => report.runId === runId && report.completedAt) ? true : undefined),
        20_000,
        `the last report of ${runId}`,
      );

    await runs.enqueue([payout('f-1')], { runId: 'first' });
    await completed('first');
    await runs.enqueue([payout('f-2')], { runId: 'second' });
    await completed('second');

    expect(
      logger.messages('warn').filter((line) => line.startsWith('ProgressScreen.shown failed on the progress of run')),
    ).toEqual([
      expect.stringContaining('ProgressScreen.shown failed on the progress of run first: Error: the screen is away'),
    ]);
    expect(screen.reports.filter((report) => report.completedAt).map((report) => report.runId)).toEqual([
      'first',
      'second',
    ]);
  });
});
