import { fileURLToPath } from 'node:url';
import { type ConnectionOptions, Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { payoutJobId, payoutRunsQueueName } from 'nestjs-payouts/payout-runs';
import { runNodeProcess } from '../node-process.js';
import { NodeServerProcess } from '../node-server-process.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider, type ProviderPlan } from '../support/mock-payouts-provider.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisCluster } from '../support/redis-cluster.js';
import { RedisServer } from '../support/redis-server.js';
import { payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APP = fileURLToPath(new URL('./payout-runs-worker-app.mjs', import.meta.url));
const CONCURRENCY = 10;
const LOCK_MS = 2000;

/** Every 97th a reset after the body was read; every 151st refused; a few throttled once with Retry-After: 1. */
const idAt = (index: number) => `rp-${String(index).padStart(5, '0')}`;
const RESET = new Set(
  Array.from({ length: 2000 }, (_, index) => index)
    .filter((i) => i % 97 === 5)
    .map(idAt),
);
const REFUSED = new Set(
  Array.from({ length: 2000 }, (_, index) => index)
    .filter((i) => i % 151 === 3)
    .map(idAt),
);
const THROTTLED = new Map<string, 429 | 503>([
  [idAt(101), 429],
  [idAt(202), 503],
  [idAt(1303), 429],
  [idAt(1804), 503],
]);
const plan: ProviderPlan = (requestId, seenBefore) => {
  const throttled = THROTTLED.get(requestId);
  if (throttled && seenBefore === 0) return { kind: 'throttled', status: throttled, retryAfterSeconds: 1 };
  if (RESET.has(requestId)) return { kind: 'reset' };
  if (REFUSED.has(requestId)) return { kind: 'refused', status: 422 };
  return { kind: 'created' };
};

/** The error line of a worker that got the reply of a payout another worker had parked after it lost its lock. */
const LATE_REPLY =
  /^error Payout (rp-\d{5}) of run two-thousand ended \w+ after it was parked as unknown \(this worker had lost its lock\)/;
/** BullMQ's error when a worker renews, or moves on, a job whose lock it lost. */
const LOCK_LOST =
  /^error Worker of queue payout-runs: (?:Missing lock for job|Lock mismatch for job|could not renew lock for job) (payout-[0-9a-f]{64})\b/;

/** Where the queue lives: a single redis-server, or a three-node cluster, with how the test and the workers reach it. */
/** bullmq 5 (the Nest 11 leg) types connections with its own copy of ioredis; the app's client works all the same. */
function asBullmqConnection(client: Cluster): ConnectionOptions {
  return client as unknown as ConnectionOptions;
}

interface Topology {
  readonly connection: () => ConnectionOptions;
  readonly workerArgs: string[];
  readonly prefix: string;
  close(): Promise<void>;
}

/** The scenario of acceptance 1, sized by `payouts` and `limit` (payouts per second, shared by the two workers). */
function killedWorkerScenario(name: string, setup: () => Promise<Topology>, payouts: number, limit: number): void {
  describeWithRedis(name, () => {
    let topology: Topology;
    let provider: MockPayoutsProvider;
    let web: RunsApp;
    let queue: Queue;
    const workers: NodeServerProcess[] = [];

    beforeAll(async () => {
      topology = await setup();
      provider = await MockPayoutsProvider.start(plan);
      queue = new Queue(payoutRunsQueueName(), { connection: topology.connection(), prefix: topology.prefix });
    }, 60_000);
    afterAll(async () => {
      await queue?.close();
      await provider?.close();
      await topology?.close();
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((worker) => worker.kill()));
      await web?.app.close();
    });

    const startWorker = async () => {
      const args = [
        APP,
        `--base-url=${provider.baseUrl}`,
        `--prefix=${topology.prefix}`,
        ...topology.workerArgs,
        `--max=${limit}`,
        `--concurrency=${CONCURRENCY}`,
        `--lock-ms=${LOCK_MS}`,
      ];
      const started = await NodeServerProcess.start(args, { cwd: ROOT, ready: /^ready$/, timeoutMs: 20_000 });
      workers.push(started.process);
      return started.process;
    };
    const lines = (pattern: RegExp) => workers.flatMap((worker) => worker.linesMatching(pattern));

    it(`sends each of ${payouts} request_ids at most once, ends every payout sent, refused or unknown, within the limit`, async () => {
      // A web-only instance enqueues; the two workers send.
      web = await startRunsApp(provider.baseUrl, {
        connection: topology.connection(),
        prefix: topology.prefix,
        rateLimit: { max: limit, durationMs: 1000 },
        worker: false,
      });
      const [killed] = await Promise.all([startWorker(), startWorker()]);
      const items = Array.from({ length: payouts }, (_, index) => payout(idAt(index)));

      const enqueued = await web.runs.enqueue(items, { runId: 'two-thousand' });
      expect(enqueued).toMatchObject({ queued: payouts, alreadyQueued: 0, refused: 0 });
      await eventually(
        async () => (provider.requests.length >= payouts * 0.3 ? true : undefined),
        30_000,
        'a third sent',
      );
      await killed!.kill();
      const done = await eventually(
        async () => {
          const progress = await web.runs.progress('two-thousand');
          return progress?.completedAt ? progress : undefined;
        },
        45_000,
        'the run completes',
      );

      // Never twice: 429 and 503 were not processed, so only they may come again.
      const processed = provider.processedCounts();
      expect([...processed].filter(([, count]) => count > 1)).toEqual([]);
      const { counts } = done;
      expect(counts.queued + counts.sending + counts.retrying).toBe(0);
      expect(counts.sent + counts.refused + counts.unknown).toBe(payouts);
      expect(counts.total).toBe(payouts);

      // Unknown: the resets, and the payouts the killed worker had begun to send.
      const { payouts: unknown, total } = await web.runs.listUnknown({ limit: payouts });
      expect(total).toBe(counts.unknown);
      const interrupted = unknown.filter((item) => item.error?.name === 'Interrupted').map((item) => item.requestId);
      const reset = unknown.filter((item) => item.error?.name !== 'Interrupted');
      const resets = [...RESET].filter((id) => Number(id.slice(3)) < payouts);
      const refusals = [...REFUSED].filter((id) => Number(id.slice(3)) < payouts);
      expect(reset.every((item) => RESET.has(item.requestId) && item.error?.name === 'PayoutOutcomeUnknownError')).toBe(
        true,
      );
      expect(new Set([...reset.map((item) => item.requestId), ...interrupted])).toEqual(
        new Set([...resets, ...interrupted]),
      );
      // A worker whose event loop stalls longer than its lock (a loaded machine) loses the lock of the payouts it is
      // sending: BullMQ runs each again, which parks it as unknown, and the reply that comes later to the first worker
      // is logged and changes nothing. Parked that way, or in flight on the killed worker: nothing else is parked.
      const lateReplies = lines(LATE_REPLY).map((line) => LATE_REPLY.exec(line)![1]!);
      expect(lateReplies.every((id) => interrupted.includes(id))).toBe(true);
      expect(interrupted.length).toBeLessThanOrEqual(CONCURRENCY + lateReplies.length);
      expect(counts.refused).toBe(refusals.filter((id) => !interrupted.includes(id)).length);
      expect(counts.unknown).toBe(new Set([...resets, ...interrupted]).size);

      // Within the limit: no sliding second holds more than 1.2 × the limit.
      expect(provider.busiestWindow(1000)).toBeLessThanOrEqual(limit * 1.2);

      // Throttled once, then sent, with no attempt used up by the pause.
      for (const id of THROTTLED.keys()) {
        if (interrupted.includes(id) || Number(id.slice(3)) >= payouts) continue;
        expect(provider.requests.filter((request) => request.requestId === id).map((request) => request.reply)).toEqual(
          ['throttled', 'created'],
        );
        expect((await queue.getJob(payoutJobId(id)))!.attemptsMade).toBeLessThanOrEqual(1);
      }

      // The survivor runs the handlers of the payouts whose outcome the killed worker stored, once their locks expire.
      const survivor = workers.find((worker) => worker !== killed)!;
      const handled = () => new Set(lines(/^(sent|refused|unknown) /).map((line) => line.split(' ')[1]));
      await eventually(async () => (handled().size === payouts ? true : undefined), LOCK_MS * 5, 'every handler ran');
      expect(
        survivor.linesMatching(/^completed two-thousand$/).length + killed!.linesMatching(/^completed /).length,
      ).toBe(1);
      // Errors: none but BullMQ's about the lock of a job of this run that a stall made the worker lose, and the late
      // replies above, whose payouts are parked.
      const jobIds = new Set(Array.from({ length: payouts }, (_, index) => payoutJobId(idAt(index))));
      const unexpected = lines(/^error /).filter((line) => {
        if (line.includes('failed for good') || LATE_REPLY.test(line)) return false;
        const lockLost = LOCK_LOST.exec(line);
        return !lockLost || !jobIds.has(lockLost[1]!);
      });
      expect(unexpected).toEqual([]);
    }, 120_000);
  });
}

killedWorkerScenario(
  'a payout run of 2,000 over two worker processes, one killed mid-run',
  async () => {
    const redis = await RedisServer.start();
    return {
      connection: () => ({ host: '127.0.0.1', port: redis.port }),
      workerArgs: [`--redis-port=${redis.port}`],
      prefix: 'runs-processes',
      close: () => redis.close(),
    };
  },
  2000,
  200,
);

killedWorkerScenario(
  'a payout run of 300 on a three-node Redis Cluster, over two worker processes, one killed mid-run',
  async () => {
    const cluster = await RedisCluster.start();
    const nodes = cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));
    const clients: Cluster[] = [];
    return {
      connection: () => {
        const client = new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } });
        clients.push(client);
        return asBullmqConnection(client);
      },
      workerArgs: [`--cluster-ports=${cluster.nodes.map((node) => node.port).join(',')}`],
      // BullMQ's keys of one queue, and the run's, must share a hash slot.
      prefix: '{runs-cluster}',
      close: async () => {
        clients.forEach((client) => client.disconnect());
        await cluster.close();
      },
    };
  },
  300,
  100,
);

describeWithRedis('a payout worker shut down with SIGTERM mid-run', () => {
  let redis: RedisServer;
  let provider: MockPayoutsProvider;
  let web: RunsApp | undefined;
  const workers: NodeServerProcess[] = [];
  beforeAll(async () => {
    redis = await RedisServer.start();
    provider = await MockPayoutsProvider.start(() => ({ kind: 'created' }), { minLatencyMs: 400, maxLatencyMs: 500 });
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.kill()));
    await web?.app.close();
    await provider?.close();
    await redis?.close();
  });

  /** The app that enqueues, with no worker of its own, in place of the previous test's. */
  const startWeb = async (prefix: string) => {
    await web?.app.close();
    return startRunsApp(provider.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix,
      rateLimit: false,
      worker: false,
    });
  };
  const startWorker = async (prefix: string, extra: string[] = []) => {
    const args = [APP, `--base-url=${provider.baseUrl}`, `--prefix=${prefix}`, `--redis-port=${redis.port}`];
    const started = await NodeServerProcess.start([...args, '--concurrency=5', ...extra], {
      cwd: ROOT,
      ready: /^ready$/,
      timeoutMs: 20_000,
    });
    workers.push(started.process);
    return started.process;
  };

  it.each([
    ['PayoutsModule', 'runs-shutdown', []],
    ['PayoutRunsModule', 'runs-shutdown-runs-first', ['--runs-first']],
  ])(
    'lets the payouts being sent finish, parks none, and leaves the rest to the next worker (%s imported first)',
    async (_first, prefix, extra) => {
      provider.requests.length = 0;
      web = await startWeb(prefix);
      const first = await startWorker(prefix, extra);
      await web.runs.enqueue(
        Array.from({ length: 30 }, (_, index) => payout(`sd-${index}`)),
        { runId: 'shutdown' },
      );
      await eventually(async () => (provider.requests.length > 0 ? true : undefined), 15_000, 'a request');
      process.kill(first.pid, 'SIGTERM');
      const exit = await first.waitForExit(20_000);
      const inFlight = new Set(provider.requests.map((request) => request.requestId));

      expect(exit.signal ?? exit.code).toBe('SIGTERM');
      expect(new Set(first.linesMatching(/^sent /).map((line) => line.slice('sent '.length)))).toEqual(inFlight);
      expect((await web.runs.progress('shutdown'))!.counts).toMatchObject({ sending: 0, unknown: 0 });

      await startWorker(prefix);
      const done = await eventually(
        async () => {
          const progress = await web!.runs.progress('shutdown');
          return progress?.completedAt ? progress : undefined;
        },
        30_000,
        'the run completes',
      );
      expect(done.counts).toMatchObject({ sent: 30, unknown: 0, total: 30 });
      expect([...provider.processedCounts().values()].every((count) => count === 1)).toBe(true);
      expect(provider.processedCounts().size).toBe(30);
    },
    60_000,
  );

  it('leaves a payout still being sent after shutdownTimeoutMs to the next worker, which parks it: never sent twice', async () => {
    const prefix = 'runs-shutdown-timeout';
    provider.requests.length = 0;
    web = await startWeb(prefix);
    // Shorter than the client's timeout (5 s): the process ends before the request could end as unknown by itself.
    const first = await startWorker(prefix, ['--shutdown-timeout-ms=1000']);
    const release = provider.hold('late-1');
    let exit: Awaited<ReturnType<NodeServerProcess['waitForExit']>>;
    try {
      await web.runs.enqueue([payout('late-1')], { runId: 'shutdown-timeout' });
      await eventually(async () => (provider.requests.length === 1 ? true : undefined), 15_000, 'the request out');
      process.kill(first.pid, 'SIGTERM');
      exit = await first.waitForExit(20_000);
    } finally {
      release();
    }

    expect(exit.signal ?? exit.code).toBe('SIGTERM');
    expect(first.linesMatching(/^(sent|unknown|refused|error) /)).toEqual([]);
    expect((await web.runs.progress('shutdown-timeout'))!.counts).toMatchObject({ sending: 1, unknown: 0 });

    // Its lock expires (2 s) and the next worker takes the job up: it finds the marker and parks the payout.
    const second = await startWorker(prefix);
    await second.waitForLine(/^unknown late-1$/, 20_000);
    expect((await web.runs.listUnknown()).payouts).toMatchObject([
      { requestId: 'late-1', error: { name: 'Interrupted' } },
    ]);
    expect(provider.requests.map((request) => request.requestId)).toEqual(['late-1']);
    expect(second.linesMatching(/^(sent|refused) /)).toEqual([]);
  }, 60_000);

  it('exits on SIGTERM without waiting shutdownTimeoutMs (30 s) when Redis stops answering while it is idle', async () => {
    const prefix = 'runs-shutdown-redis-hung';
    web = await startWeb(prefix);
    const worker = await startWorker(prefix);
    await web.runs.enqueue([payout('hung-1'), payout('hung-2')], { runId: 'redis-hung' });
    await worker.waitForLine(/^completed redis-hung$/, 20_000);
    // Idle: both jobs completed in Redis, not only their handlers run (a job's last writes follow its handlers).
    const queue = new Queue(payoutRunsQueueName(), { connection: { host: '127.0.0.1', port: redis.port }, prefix });
    try {
      await eventually(
        async () => ((await queue.getJobCounts('completed')).completed === 2 ? true : undefined),
        20_000,
        'both jobs completed',
      );
    } finally {
      await queue.close();
    }

    const exit = await redis.whileHung(() => {
      process.kill(worker.pid, 'SIGTERM');
      // Well below shutdownTimeoutMs: no payout is being sent, so nothing is waited for but Redis, which hangs.
      return worker.waitForExit(20_000);
    });

    expect(exit.signal ?? exit.code).toBe('SIGTERM');
    expect(worker.linesMatching(/^(sent|unknown|refused) /).sort()).toEqual(['sent hung-1', 'sent hung-2']);
  }, 60_000);

  it('ends the process after a bootstrap that fails on a missing account: no Redis connection is left open', async () => {
    const args = [APP, `--base-url=${provider.baseUrl}`, '--prefix=runs-no-account', `--redis-port=${redis.port}`];
    const run = await runNodeProcess([...args, '--runs-account=ke'], { cwd: ROOT, timeoutMs: 30_000 });

    expect(run.stdout).toContain(
      `bootstrap-failed PayoutRunsModule option "account" is invalid: expected the name of a PayoutsModule ` +
        `registration of the app, but there is none named 'ke'.`,
    );
    // Exited by itself with the failure's status, not killed at the timeout with the connection holding it.
    expect(run.code).toBe(1);
  }, 60_000);
});
