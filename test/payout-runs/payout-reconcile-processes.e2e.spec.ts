import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { MockFault, MockPayoutsApi } from 'nestjs-payouts/testing';
import { NodeServerProcess } from '../node-server-process.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { ACCESS_TOKEN, API_KEY, payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APP = fileURLToPath(new URL('./payout-reconcile-app.mjs', import.meta.url));

describeWithRedis('reconcile sweeps of two processes', () => {
  let redis: RedisServer;
  let mock: MockPayoutsApi;
  let web: RunsApp | undefined;
  const workers: NodeServerProcess[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
  });
  afterAll(async () => {
    await mock?.close();
    await redis?.close();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.kill()));
    await web?.app.close();
  });

  const startWorker = async () => {
    const args = [
      APP,
      `--base-url=${mock.baseUrl}`,
      '--prefix=reconcile-processes',
      `--redis-port=${redis.port}`,
      `--api-key=${API_KEY}`,
      `--access-token=${ACCESS_TOKEN}`,
    ];
    const started = await NodeServerProcess.start(args, { cwd: ROOT, ready: /^ready$/, timeoutMs: 20_000 });
    workers.push(started.process);
    return started.process;
  };

  it('never looks up nor resolves one parked payout twice, whichever process sweeps', async () => {
    const ids = Array.from({ length: 30 }, (_, index) => `proc-${index}`);
    // Every first POST is committed, then its connection reset: each payout is parked once.
    mock.fail({ when: { method: 'POST' }, times: ids.length }, MockFault.resetAfterCommit());
    web = await startRunsApp(mock.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix: 'reconcile-processes',
      rateLimit: false,
      worker: false,
    });
    await Promise.all([startWorker(), startWorker()]);

    await web.runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'processes' },
    );
    const lines = (pattern: RegExp) => workers.flatMap((worker) => worker.linesMatching(pattern));
    // The sweeping process logs a resolution after it has put the job back, which the other process may then run, and
    // each process prints through a pipe of its own: a resolution's line can come after its payout's sent line.
    await eventually(
      async () =>
        lines(/^sent /).length >= ids.length && lines(/ resolved as sent by reconcile/).length >= ids.length
          ? true
          : undefined,
      60_000,
      'every sent handler has run and every resolution is logged',
    );

    expect(lines(/^error /)).toEqual([]);
    expect(
      lines(/^sent /)
        .map((line) => line.slice('sent '.length))
        .sort(),
    ).toEqual([...ids].sort());
    const lookups = lines(/^lookup /).map((line) => line.slice('lookup '.length));
    expect([...lookups].sort()).toEqual([...ids].sort());
    const resolved = lines(/ resolved as sent by reconcile/);
    expect(resolved).toHaveLength(ids.length);
    expect((await web.runs.progress('processes'))!.counts).toMatchObject({ sent: ids.length, unknown: 0 });
    expect(
      mock.calls
        .filter((call) => call.committed)
        .map((call) => call.requestId)
        .sort(),
    ).toEqual([...ids].sort());
  });
});
