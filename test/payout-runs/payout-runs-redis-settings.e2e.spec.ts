import { afterEach, expect, it } from 'vitest';
import { getPayoutsHealthSourceToken, type PayoutsHealthSource, RedisEvictionPolicyError } from 'nestjs-payouts';
import { PayoutRunsModule, type PayoutRunsOptions } from 'nestjs-payouts/payout-runs';
import { MockPayoutsApi } from 'nestjs-payouts/testing';
import { RecordingLogger } from '../recording-logger.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { ACCESS_TOKEN, API_KEY, payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

const REDIS_PASSWORD = 'settings-redis-password-4c9e1b';

describeWithRedis("payout-run workers and Redis's eviction policy and persistence", () => {
  let redis: RedisServer | undefined;
  let mock: MockPayoutsApi | undefined;
  let started: RunsApp | undefined;

  afterEach(async () => {
    await started?.app.close();
    started = undefined;
    await mock?.close();
    mock = undefined;
    await redis?.close();
    redis = undefined;
  });

  /** A Redis of the test's own with these settings, and an app whose worker sends to the mock API. */
  const start = async (redisArgs: string[], options: Partial<PayoutRunsOptions> = {}) => {
    redis = await RedisServer.start({ args: ['--requirepass', REDIS_PASSWORD, ...redisArgs] });
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    started = await startRunsApp(mock.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port, password: REDIS_PASSWORD },
      rateLimit: false,
      ...options,
    });
    return started;
  };
  const redisLines = (logger: RecordingLogger) => logger.lines.filter((line) => line.includes('Redis of queue'));
  const sendsOne = async (app: RunsApp) => {
    await app.runs.enqueue([payout('settings-1')]);
    await eventually(async () => (app.results.sent.length === 1 ? true : undefined), 20_000, 'the payout is sent');
  };

  it('refuses to start a worker on allkeys-lru, with an error naming the setting and the option', async () => {
    const refusal = await start(['--maxmemory-policy', 'allkeys-lru']).catch((error: unknown) => error);

    expect(refusal).toBeInstanceOf(RedisEvictionPolicyError);
    expect((refusal as RedisEvictionPolicyError).policy).toBe('allkeys-lru');
    expect((refusal as Error).message).toBe(
      "The worker of queue payout-runs does not start: Redis's maxmemory-policy is allkeys-lru, which may evict a " +
        'payout\'s record, and a payout whose "sending" marker is evicted could be sent twice. Set maxmemory-policy ' +
        "noeviction on Redis, or accept this policy with the PayoutRunsModule option acceptEvictionPolicy: 'allkeys-lru'.",
    );
    expect((refusal as Error).message).not.toContain(REDIS_PASSWORD);
    expect(mock!.calls).toEqual([]);
  });

  it('refuses a policy other than the one accepted', async () => {
    const refusal = await start(['--maxmemory-policy', 'volatile-lru'], {
      acceptEvictionPolicy: 'allkeys-lru',
    }).catch((error: unknown) => error);

    expect(refusal).toBeInstanceOf(RedisEvictionPolicyError);
    expect((refusal as RedisEvictionPolicyError).policy).toBe('volatile-lru');
  });

  it('starts on the accepted policy, with a warning, and sends', async () => {
    const app = await start(['--maxmemory-policy', 'allkeys-lru', '--appendonly', 'yes'], {
      acceptEvictionPolicy: 'allkeys-lru',
    });
    await sendsOne(app);

    expect(redisLines(app.logger)).toEqual([
      'log: Redis of queue payout-runs: maxmemory-policy allkeys-lru, appendonly yes, appendfsync everysec PayoutRuns',
      "warn: Redis of queue payout-runs: maxmemory-policy allkeys-lru is accepted by acceptEvictionPolicy, though an evicted payout's record could be sent twice; set maxmemory-policy noeviction to rule it out PayoutRuns",
    ]);
  });

  it('reports persistence at boot: a warning naming appendonly when it is off', async () => {
    // The test support starts Redis with persistence off.
    const app = await start([]);
    await sendsOne(app);

    expect(redisLines(app.logger)).toEqual([
      'log: Redis of queue payout-runs: maxmemory-policy noeviction, appendonly no, appendfsync everysec PayoutRuns',
      'warn: Redis of queue payout-runs: appendonly is no: a restart of Redis loses what was written since its last snapshot, and a payout whose "sending" marker is lost could be sent twice; set appendonly yes (with appendfsync everysec or always) PayoutRuns',
    ]);
    expect(app.logger.lines.join('\n')).not.toContain(REDIS_PASSWORD);
  });

  it('warns on appendfsync no, and only reports appendfsync everysec', async () => {
    const app = await start(['--appendonly', 'yes', '--appendfsync', 'no']);
    expect(redisLines(app.logger)).toEqual([
      'log: Redis of queue payout-runs: maxmemory-policy noeviction, appendonly yes, appendfsync no PayoutRuns',
      'warn: Redis of queue payout-runs: appendfsync is no: the operating system decides when the log reaches the disk, and a crash loses what it had not written; set appendfsync everysec or always PayoutRuns',
    ]);
    await started!.app.close();
    started = undefined;
    await redis!.close();
    redis = undefined;

    const durable = await start(['--appendonly', 'yes', '--appendfsync', 'everysec']);
    expect(redisLines(durable.logger)).toEqual([
      'log: Redis of queue payout-runs: maxmemory-policy noeviction, appendonly yes, appendfsync everysec PayoutRuns',
    ]);
  });

  it('reads the policy by INFO where CONFIG is renamed away, as on a managed Redis', async () => {
    const refusal = await start(['--rename-command', 'CONFIG', '', '--maxmemory-policy', 'allkeys-lfu']).catch(
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(RedisEvictionPolicyError);
    expect((refusal as RedisEvictionPolicyError).policy).toBe('allkeys-lfu');
    await redis!.close();
    redis = undefined;
    await mock!.close();

    const app = await start(['--rename-command', 'CONFIG', '', '--appendonly', 'yes']);
    await sendsOne(app);
    expect(redisLines(app.logger)).toEqual([
      'log: Redis of queue payout-runs: maxmemory-policy noeviction, appendonly yes, appendfsync unknown (CONFIG GET is not available to this connection) PayoutRuns',
    ]);
  });

  it('checks a Redis that answers only after the boot, and leaves the worker stopped on a refused policy', async () => {
    redis = await RedisServer.start({ args: ['--requirepass', REDIS_PASSWORD, '--maxmemory-policy', 'allkeys-lru'] });
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    await redis.stop();
    started = await startRunsApp(mock.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port, password: REDIS_PASSWORD },
      rateLimit: false,
    });
    const { logger } = started;
    expect(redisLines(logger)).toEqual([
      'warn: Redis of queue payout-runs did not answer within 5000 ms: its worker starts once Redis answers and its eviction policy is checked PayoutRuns',
    ]);
    const source = started.app.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
    expect(source.worker!()).toEqual({ running: false, paused: false });

    await redis.restart();
    const refusal = await eventually(
      async () => logger.lines.find((line) => line.startsWith('error: The worker of queue payout-runs')),
      30_000,
      'the refusal is logged',
    );

    expect(refusal).toContain("Redis's maxmemory-policy is allkeys-lru");
    expect(source.worker!()).toEqual({ running: false, paused: false });
    await started.runs.enqueue([payout('never-sent')]);
    expect(mock.calls).toEqual([]);
  });

  it('checks acceptEvictionPolicy at boot', () => {
    const connection = { host: '127.0.0.1', port: 6379 };
    for (const acceptEvictionPolicy of ['', 'ALLKEYS-LRU', 'allkeys lru', 42]) {
      expect(() =>
        PayoutRunsModule.forRoot({
          connection,
          rateLimit: false,
          acceptEvictionPolicy: acceptEvictionPolicy as string,
        }),
      ).toThrow(
        'PayoutRunsModule option "acceptEvictionPolicy" is invalid: expected a Redis maxmemory-policy, such as \'allkeys-lru\'.',
      );
    }
  });
});
