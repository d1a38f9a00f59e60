import { Controller, Get, Inject, Injectable, type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  getPayoutsHealthSourceToken,
  getPayoutsServiceToken,
  type PayoutsHealthComponent,
  type PayoutsHealthSource,
  PayoutsModule,
  type PayoutsService,
} from 'nestjs-payouts';
import { getPayoutRunsToken, OnPayoutSent, PayoutRunsModule, type PayoutRunsService } from 'nestjs-payouts/payout-runs';
import { payoutsQueue } from 'nestjs-payouts/queue';
import { RedisNotificationDedupeStore } from 'nestjs-payouts/redis';
import { PayoutsHealthIndicator, type PayoutsHealthThresholds } from 'nestjs-payouts/terminus';
import { payout } from '../payout-runs/payout-runs-test-app.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider, type ProviderPlan } from '../support/mock-payouts-provider.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';

const API_KEY = 'health-api-key-5b1c7e';
const ACCESS_TOKEN = 'health-access-token-9d4f2a';
const SECRET = 'health-notifications-secret-2c8e';
const REDIS_PASSWORD = 'health-redis-password-7e3a1d';
const TIMEOUT_MS = 500;

/** What the test changes between requests: the thresholds, and whether the token function fails. */
const settings: { thresholds: PayoutsHealthThresholds; tokenFails: boolean } = { thresholds: {}, tokenFails: false };
/** Probes of the patient readiness route that have reached the indicator. */
let patientProbes = 0;

@Controller('health')
class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(PayoutsHealthIndicator) private readonly payouts: PayoutsHealthIndicator,
  ) {}

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.payouts.workers()]);
  }

  @Get('mistyped')
  @HealthCheck()
  mistyped() {
    return this.health.check([
      () => this.payouts.check('payouts', { account: 'europe' }),
      () => this.payouts.workers('payouts-workers', { account: 'europe' }),
    ]);
  }

  /** Readiness with a time limit longer than any outage of the test. */
  @Get('ready-patient')
  @HealthCheck()
  readyPatient() {
    patientProbes += 1;
    return this.health.check([
      () => this.payouts.check('payouts', { timeoutMs: 60_000 }),
      () => this.payouts.check('payouts-store', { account: 'store', timeoutMs: 60_000 }),
    ]);
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.payouts.check('payouts', { timeoutMs: TIMEOUT_MS, thresholds: settings.thresholds }),
      () => this.payouts.check('payouts-store', { account: 'store', timeoutMs: TIMEOUT_MS }),
    ]);
  }
}

/** A sent handler that always fails, so that its payout ends in the failed set. */
@Injectable()
class FailingLedger {
  @OnPayoutSent()
  onSent(result: { requestId: string }): void {
    if (result.requestId.startsWith('fail-')) throw new Error('the ledger is away');
  }
}

describeWithRedis('health checks for @nestjs/terminus, over HTTP', () => {
  let redis: RedisServer;
  let provider: MockPayoutsProvider;
  let app: INestApplication | undefined;
  let client: Redis | undefined;
  let base: string;
  let prefixes = 0;

  beforeAll(async () => {
    redis = await RedisServer.start({ args: ['--requirepass', REDIS_PASSWORD] });
    const plan: ProviderPlan = (requestId) => (requestId.startsWith('park-') ? { kind: 'reset' } : { kind: 'created' });
    provider = await MockPayoutsProvider.start(plan, { minLatencyMs: 1, maxLatencyMs: 5 });
  });
  afterAll(async () => {
    await provider?.close();
    await redis?.close();
  });
  afterEach(async () => {
    // bullmq 5 rejects with nobody listening when a connection is closed during its start-up check (see
    // docs/troubleshooting.md): a readiness check first, which reaches Redis on each queue's connection, lets an app
    // that answered one quick request finish starting before it closes.
    if (app) await fetch(`${base}/health/ready`).then((response) => response.text());
    await app?.close();
    app = undefined;
    client?.disconnect();
    client = undefined;
    settings.thresholds = {};
    settings.tokenFails = false;
  });

  const start = async () => {
    const connection = { host: '127.0.0.1', port: redis.port, password: REDIS_PASSWORD };
    const prefix = `health${++prefixes}`;
    client = new Redis({ ...connection, maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    @Module({
      imports: [
        TerminusModule,
        PayoutsModule.forRoot({
          baseUrl: provider.baseUrl,
          apiKey: API_KEY,
          accessToken: async () => {
            if (settings.tokenFails) throw new Error(`token endpoint refused ${ACCESS_TOKEN}`);
            return ACCESS_TOKEN;
          },
          notifications: {
            verification: { secret: { value: SECRET } },
            dispatcher: payoutsQueue({ connection, prefix, attempts: 1 }),
          },
        }),
        PayoutsModule.forRoot({
          name: 'store',
          baseUrl: provider.baseUrl,
          apiKey: API_KEY,
          accessToken: ACCESS_TOKEN,
          notifications: {
            path: 'store/notifications',
            verification: { secret: { value: SECRET } },
            dedupe: { store: new RedisNotificationDedupeStore(client!, { prefix: `${prefix}:` }) },
          },
        }),
        PayoutRunsModule.forRoot({ connection, prefix, rateLimit: false, attempts: 1, backoffMs: 20 }),
      ],
      controllers: [HealthController],
      providers: [PayoutsHealthIndicator, FailingLedger],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
    return {
      payouts: app.get<PayoutsService>(getPayoutsServiceToken()),
      runs: app.get<PayoutRunsService>(getPayoutRunsToken()),
    };
  };
  const get = async (path: string) => {
    const started = Date.now();
    const response = await fetch(`${base}${path}`);
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text), elapsedMs: Date.now() - started };
  };
  const expectNoSecret = (text: string) => {
    for (const secret of [API_KEY, ACCESS_TOKEN, SECRET, REDIS_PASSWORD, 'redis://']) {
      expect(text).not.toContain(secret);
    }
  };

  it('is up with the figures of each Redis connection and the access token, and names no credential', async () => {
    const { payouts } = await start();
    await payouts.createPayout(payout('ok-1'));

    const ready = await get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ok');
    const figures = ready.body.info.payouts;
    expect(figures).toMatchObject({
      status: 'up',
      account: 'default',
      'notifications-queue': {
        status: 'up',
        backlog: 0,
        failed: 0,
        paused: false,
        rateLimitedForMs: 0,
        worker: { running: true, paused: false },
      },
      'payout-runs': { status: 'up', backlog: 0, failed: 0, parked: 0, worker: { running: true, paused: false } },
      accessToken: { lastFetch: 'ok' },
    });
    expect(figures['dedupe-store']).toBeUndefined();
    for (const part of ['notifications-queue', 'payout-runs']) {
      expect(figures[part].latencyMs).toBeGreaterThanOrEqual(0);
    }
    expect(ready.body.info['payouts-store']).toEqual({
      status: 'up',
      account: 'store',
      'dedupe-store': { status: 'up', latencyMs: expect.any(Number) },
    });
    expectNoSecret(ready.text);

    const live = await get('/health/live');
    expect(live.status).toBe(200);
    expect(live.body.info['payouts-workers']).toEqual({
      status: 'up',
      account: 'default',
      'notifications-queue': { running: true, paused: false },
      'payout-runs': { running: true, paused: false },
    });
  });

  it('answers 503 within its time limit while Redis is stopped, and is up again once it is back on its port', async () => {
    await start();
    expect((await get('/health/ready')).status).toBe(200);

    await redis.stop();
    const down = await get('/health/ready');
    expect(down.status).toBe(503);
    // The time limit, plus a margin for a loaded machine: the check never waits on Redis's own retries.
    expect(down.elapsedMs).toBeLessThan(TIMEOUT_MS + 4000);
    const details = { ...down.body.details.payouts, ...down.body.details['payouts-store'] };
    expect(down.body.details.payouts.status).toBe('down');
    expect(down.body.details['payouts-store'].status).toBe('down');
    for (const part of ['dedupe-store', 'notifications-queue', 'payout-runs']) {
      expect(details[part]).toEqual({
        status: 'down',
        problem: expect.stringMatching(/^(no reply from Redis within 500 ms|Redis failed: \w+)$/),
      });
    }
    expect(down.body.details.payouts.problems).toHaveLength(2);
    expect(down.body.details['payouts-store'].problems).toHaveLength(1);
    expectNoSecret(down.text);
    // Liveness asks nothing of Redis: the instance is not restarted for an outage.
    expect((await get('/health/live')).status).toBe(200);

    await redis.restart();
    const back = await eventually(
      async () => {
        const ready = await get('/health/ready');
        return ready.status === 200 ? ready : undefined;
      },
      30_000,
      'the check is up again',
    );
    expect(back.body.info['payouts-store']['dedupe-store'].status).toBe('up');
    expect(back.body.info.payouts['payout-runs'].status).toBe('up');
  });

  it('sends one PING per part while Redis hangs, however many probes come, and answers them all', async () => {
    await start();
    expect((await get('/health/ready')).status).toBe(200);
    // Counted at the seam: every PING a part sends goes through its health source.
    const pings = new Map<PayoutsHealthComponent, number>();
    for (const [component, account] of [
      ['dedupe-store', 'store'],
      ['notifications-queue', 'default'],
      ['payout-runs', 'default'],
    ] as const) {
      const source = app!.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken(component, account));
      const ping = source.ping.bind(source);
      pings.set(component, 0);
      source.ping = () => {
        pings.set(component, pings.get(component)! + 1);
        return ping();
      };
    }
    // And on the wire: every command Redis runs, once it runs again.
    const monitored: string[] = [];
    const watcher = new Redis({ host: '127.0.0.1', port: redis.port, password: REDIS_PASSWORD });
    const monitor = await watcher.monitor();
    monitor.on('monitor', (_time: string, args: string[]) => monitored.push(args[0]!.toLowerCase()));
    monitor.on('error', () => undefined);
    patientProbes = 0;

    redis.hang();
    try {
      const hung = await Promise.all(Array.from({ length: 20 }, () => get('/health/ready')));
      for (const probe of hung) {
        expect(probe.status).toBe(503);
        expect(probe.body.details.payouts['payout-runs']).toEqual({
          status: 'down',
          problem: 'no reply from Redis within 500 ms',
        });
        expect(probe.body.details['payouts-store']['dedupe-store']).toEqual({
          status: 'down',
          problem: 'no reply from Redis within 500 ms',
        });
      }
      const patient = Array.from({ length: 20 }, () => get('/health/ready-patient'));
      await eventually(async () => (patientProbes === 20 ? true : undefined), 20_000, 'every probe is waiting');
      expect(Object.fromEntries(pings)).toEqual({ 'dedupe-store': 1, 'notifications-queue': 1, 'payout-runs': 1 });

      redis.resume();
      for (const probe of await Promise.all(patient)) {
        expect(probe.status).toBe(200);
        expect(probe.body.info.payouts['payout-runs'].status).toBe('up');
        expect(probe.body.info['payouts-store']['dedupe-store'].status).toBe('up');
      }
      await eventually(
        async () => (monitored.filter((command) => command === 'ping').length >= 3 ? true : undefined),
        20_000,
        'Redis runs the PINGs sent while it was stopped',
      );
      expect(monitored.filter((command) => command === 'ping')).toEqual(['ping', 'ping', 'ping']);
      expect(Object.fromEntries(pings)).toEqual({ 'dedupe-store': 1, 'notifications-queue': 1, 'payout-runs': 1 });
    } finally {
      redis.resume();
      monitor.disconnect();
      watcher.disconnect();
    }
    // The next probe, once the shared check has answered, starts a check of its own.
    expect((await get('/health/ready')).status).toBe(200);
    expect(Object.fromEntries(pings)).toEqual({ 'dedupe-store': 2, 'notifications-queue': 2, 'payout-runs': 2 });
  });

  it('is down with the counts when failed and parked payouts pass their thresholds', async () => {
    const { runs } = await start();
    settings.thresholds = { payoutsFailed: 0, payoutsParked: 0, payoutsBacklog: 100 };
    await runs.enqueue([payout('park-1'), payout('park-2'), payout('fail-1'), payout('fine-1')], { runId: 'health' });
    const down = await eventually(
      async () => {
        const ready = await get('/health/ready');
        const part = ready.body.details?.payouts?.['payout-runs'];
        return part?.failed === 1 && part?.parked === 2 ? ready : undefined;
      },
      20_000,
      'the failed and parked payouts are counted',
    );
    expect(down.status).toBe(503);
    expect(down.body.details.payouts.problems).toEqual([
      'payout-runs: failed 1 is above payoutsFailed (0)',
      'payout-runs: parked 2 is above payoutsParked (0)',
    ]);

    settings.thresholds = { payoutsFailed: 1, payoutsParked: 2 };
    expect((await get('/health/ready')).status).toBe(200);
  });

  it('is down for an account the app does not register, rather than up with nothing checked', async () => {
    await start();

    const down = await get('/health/mistyped');
    expect(down.status).toBe(503);
    expect(down.body.details.payouts).toEqual({
      status: 'down',
      account: 'europe',
      problems: ["account: the app has no PayoutsModule registration named 'europe'"],
    });
    expect(down.body.details['payouts-workers']).toEqual({
      status: 'down',
      account: 'europe',
      problems: ["account: the app has no PayoutsModule registration named 'europe'"],
    });
  });

  it('is down while the payout queue is paused, counting what waits in it', async () => {
    const { runs } = await start();
    await runs.queue.pause();
    await runs.enqueue([payout('paused-1'), payout('paused-2')], { runId: 'paused' });

    const down = await get('/health/ready');
    expect(down.status).toBe(503);
    expect(down.body.details.payouts['payout-runs']).toMatchObject({ status: 'up', paused: true, backlog: 2 });
    expect(down.body.details.payouts.problems).toEqual(['payout-runs: the queue is paused']);

    await runs.queue.resume();
    await eventually(
      async () => ((await get('/health/ready')).status === 200 ? true : undefined),
      20_000,
      'up once resumed',
    );
  });

  it('reports a rate-limit pause without going down', async () => {
    const { runs } = await start();
    // What a 429 does: the account's queue pauses for the time the provider asked.
    await runs.queue.rateLimit(60_000);

    const ready = await get('/health/ready');
    expect(ready.status).toBe(200);
    const part = ready.body.info.payouts['payout-runs'];
    expect(part.status).toBe('up');
    expect(part.rateLimitedForMs).toBeGreaterThan(0);
    expect(part.rateLimitedForMs).toBeLessThanOrEqual(60_000);
    expect(ready.body.info.payouts.problems).toBeUndefined();
  });

  it('is down when the last access-token fetch failed, naming neither the token nor the error', async () => {
    const { payouts } = await start();
    settings.tokenFails = true;
    await expect(payouts.createPayout(payout('token-1'))).rejects.toThrow('threw Error');

    const down = await get('/health/ready');
    expect(down.status).toBe(503);
    expect(down.body.details.payouts.accessToken).toMatchObject({ lastFetch: 'failed', problem: 'threw Error' });
    expect(down.body.details.payouts.problems).toEqual(['access token: the last fetch failed (threw Error)']);
    expectNoSecret(down.text);
  });
});
