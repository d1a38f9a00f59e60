import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type CreatePayoutRequest, PayoutRunEnqueueError, PayoutValidationError } from 'nestjs-payouts';
import { payoutJobId, payoutRunsQueueName, type PayoutRunsOptions } from 'nestjs-payouts/payout-runs';
import { refusingPort } from '../payouts/payouts-api-stub.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

/** Short, for the specs that wait it out; the others keep the default, for a busy machine. */
const TIMEOUT_MS = 2000;
const INVALID = { ...payout('f-invalid'), amount: { value: '1,5', currency_code: 'KES' } };

/** What the error says, when the enqueue of `payout(ids…)` and `INVALID` last stops. */
function expectEnqueueError(error: unknown, reason: 'timeout' | 'error', statuses: Record<string, string>): void {
  expect(error).toBeInstanceOf(PayoutRunEnqueueError);
  const failure = error as PayoutRunEnqueueError;
  const ids = Object.keys(statuses);
  expect(failure).toMatchObject({ runId: 'failing', reason, retrySafe: true });
  expect(failure.items).toEqual([
    ...ids.map((requestId, index) => ({ index, requestId, status: statuses[requestId] })),
    { index: ids.length, requestId: 'f-invalid', status: 'refused' },
  ]);
  expect(failure.message).toContain(
    'Enqueueing the same items again is safe: it queues what is missing and nothing twice.',
  );
}

describeWithRedis('enqueue() while Redis fails', () => {
  let redis: RedisServer;
  let provider: MockPayoutsProvider;
  const apps: RunsApp[] = [];
  const queues: Queue[] = [];
  let prefixes = 0;

  beforeAll(async () => {
    redis = await RedisServer.start();
    provider = await MockPayoutsProvider.start(() => ({ kind: 'created' }), { minLatencyMs: 1, maxLatencyMs: 5 });
  });
  afterAll(async () => {
    await provider?.close();
    await redis?.close();
  });
  afterEach(async () => {
    // A stopped server would hold every close up.
    if (redis.pid !== undefined) redis.resume();
    if (redis.pid === undefined) await redis.restart();
    await Promise.all(apps.splice(0).map((started) => started.app.close()));
    await Promise.all(queues.splice(0).map((queue) => queue.close()));
  });

  const start = async (options: Partial<PayoutRunsOptions> & { prefix: string }) => {
    const started = await startRunsApp(provider.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      rateLimit: false,
      worker: false,
      enqueueTimeoutMs: TIMEOUT_MS,
      ...options,
    });
    apps.push(started);
    return started;
  };
  const nextPrefix = () => `failures${++prefixes}`;
  const queueOf = (prefix: string) => {
    const queue = new Queue(payoutRunsQueueName(), { connection: { host: '127.0.0.1', port: redis.port }, prefix });
    queues.push(queue);
    return queue;
  };
  /** A worker of the same queue; resolves once the run has sent each of `ids`. */
  const sendAll = async (prefix: string, ids: string[]) => {
    const worker = await start({ prefix, worker: true, enqueueTimeoutMs: undefined });
    return eventually(
      async () => {
        const progress = await worker.runs.progress('failing');
        return progress?.completedAt && worker.results.sent.length === ids.length ? progress : undefined;
      },
      20_000,
      'the run is sent',
    );
  };

  it('rejects within enqueueTimeoutMs when Redis is at a closed port, saying nothing was queued', async () => {
    const { runs, logger } = await start({
      prefix: nextPrefix(),
      connection: { host: '127.0.0.1', port: await refusingPort(), password: 'redis-secret-7d1f' },
    });

    const error = await runs.enqueue([payout('f-1'), payout('f-2'), INVALID], { runId: 'failing' }).catch((e) => e);

    expectEnqueueError(error, 'timeout', { 'f-1': 'not-queued', 'f-2': 'not-queued' });
    expect((error as Error).message).toBe(
      `Payout run failing was not fully enqueued: Redis gave no reply within enqueueTimeoutMs (${TIMEOUT_MS} ms). ` +
        'Of 3 items, 0 queued, 0 maybe queued, 2 not queued, 1 refused. ' +
        'Enqueueing the same items again is safe: it queues what is missing and nothing twice.',
    );
    expect(JSON.stringify({ ...(error as object), message: (error as Error).message })).not.toContain(
      'redis-secret-7d1f',
    );
    expect(logger.lines.join('\n')).not.toContain('redis-secret-7d1f');
  });

  it.each([
    ['stopped with SIGSTOP', 'SIGSTOP'],
    ['killed', 'SIGKILL'],
  ])(
    'rejects within enqueueTimeoutMs when Redis is %s mid-way, and the same enqueue once it is back queues each payout once',
    async (_how, signal) => {
      const prefix = nextPrefix();
      const { runs } = await start({ prefix });
      const ids = [`${prefix}-1`, `${prefix}-2`, `${prefix}-3`];
      const items: CreatePayoutRequest[] = [...ids.map((id) => payout(id)), INVALID];
      // Connected, and one payout queued, before Redis goes away.
      await runs.queue.waitUntilReady();
      expect(await runs.enqueue([payout(ids[0]!)], { runId: 'failing' })).toMatchObject({ queued: 1 });
      if (signal === 'SIGSTOP') redis.hang();
      else await redis.stop();

      const error = await runs.enqueue(items, { runId: 'failing' }).catch((e) => e);

      // The claim of the only chunk got no reply: no job was added by this call.
      expectEnqueueError(error, 'timeout', Object.fromEntries(ids.map((id) => [id, 'not-queued'])));
      if (signal === 'SIGSTOP') {
        redis.resume();
      } else {
        await redis.restart();
        // An empty dataset: the first payout's job and record went with the server.
      }
      const again = await eventually(
        () => runs.enqueue(items, { runId: 'failing' }).catch(() => undefined),
        20_000,
        'an enqueue once Redis is back',
      );
      if (signal === 'SIGSTOP') {
        // The claim left pending ran once the server went on: each payout claimed, its job added now.
        expect(again.items.map((item) => item.status)).toEqual([
          'already-queued',
          'already-queued',
          'already-queued',
          'refused',
        ]);
      } else {
        // The claim left pending may have been sent again on the new connection before this enqueue, or not.
        expect(again.items.slice(0, 3).every((item) => ['queued', 'already-queued'].includes(item.status))).toBe(true);
        expect(again.refused).toBe(1);
      }

      const done = await sendAll(prefix, ids);
      expect(done.counts).toMatchObject({ queued: 0, sent: 3, total: 3 });
      expect(ids.map((id) => provider.processedCounts().get(id))).toEqual([1, 1, 1]);
    },
    60_000,
  );

  it('waits for Redis within enqueueTimeoutMs: called while Redis is down, it queues once Redis is back', async () => {
    const prefix = nextPrefix();
    const { runs } = await start({ prefix, enqueueTimeoutMs: undefined });
    await runs.queue.waitUntilReady();
    await redis.stop();

    const enqueued = runs.enqueue([payout(`${prefix}-1`)], { runId: 'waiting' });
    await redis.restart();

    expect(await enqueued).toMatchObject({ queued: 1, refused: 0 });
    expect(await queueOf(prefix).getJob(payoutJobId(`${prefix}-1`))).toBeDefined();
  }, 60_000);

  it('refuses alone an item nested 10,000 levels deep, and queues the 501 others', async () => {
    const prefix = nextPrefix();
    const { runs } = await start({ prefix, enqueueTimeoutMs: undefined });
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let level = 0; level < 10_000; level++) deep = (deep.next = {}) as Record<string, unknown>;
    const items = Array.from({ length: 502 }, (_, index) => payout(`deep-${index}`));
    items[500] = { ...items[500]!, extra: root } as CreatePayoutRequest;

    const result = await runs.enqueue(items, { runId: 'deep' });

    expect(result).toMatchObject({ queued: 501, alreadyQueued: 0, refused: 1 });
    const refused = result.items[500]!;
    expect(refused).toMatchObject({ index: 500, requestId: 'deep-500', status: 'refused' });
    const error = refused.status === 'refused' ? refused.error : undefined;
    expect(error).toBeInstanceOf(PayoutValidationError);
    expect((error as PayoutValidationError).errors).toEqual([
      { path: 'extra', messages: ['must not nest more than 64 levels deep'] },
    ]);
    expect((await runs.progress('deep'))!.counts).toMatchObject({ queued: 501, total: 501 });
    // Every claimed request_id has its job.
    expect((await queueOf(prefix).getJobCounts('waiting')).waiting).toBe(501);
  });

  it('refuses alone an item holding a bigint and one whose field throws when read, in separate chunks, and queues the others', async () => {
    const prefix = nextPrefix();
    const { runs } = await start({ prefix, enqueueTimeoutMs: undefined });
    // Queued by an earlier run: recognised in the middle of a chunk, under that run.
    await runs.enqueue([payout('odd-3')], { runId: 'earlier' });
    const items = Array.from({ length: 600 }, (_, index) => payout(`odd-${index}`));
    items[1] = { ...items[1]!, extra: { count: 10n } } as unknown as CreatePayoutRequest;
    const throwing = { ...items[550]! };
    Object.defineProperty(throwing, 'extra', {
      enumerable: true,
      get: () => {
        throw new Error('the getter holds sk_live_getter_secret');
      },
    });
    items[550] = throwing;

    const result = await runs.enqueue(items, { runId: 'odd' });

    expect(result).toMatchObject({ queued: 597, alreadyQueued: 1, refused: 2 });
    expect(result.items[3]).toEqual({ index: 3, requestId: 'odd-3', status: 'already-queued', runId: 'earlier' });
    const errorOf = (index: number) => {
      const item = result.items[index]!;
      expect(item).toMatchObject({ index, requestId: `odd-${index}`, status: 'refused' });
      const error = item.status === 'refused' ? item.error : undefined;
      expect(error).toBeInstanceOf(PayoutValidationError);
      return error as PayoutValidationError;
    };
    expect(errorOf(1).errors).toEqual([{ path: 'extra', messages: ['must hold JSON values: a bigint is not one'] }]);
    expect(errorOf(550).errors).toEqual([{ path: '', messages: ['must be plain data: reading it threw'] }]);
    expect(JSON.stringify(errorOf(550))).not.toContain('sk_live_getter_secret');
    expect(errorOf(550).message).not.toContain('sk_live_getter_secret');
    expect((await runs.progress('odd'))!.counts).toMatchObject({ queued: 597, total: 597 });
    // Every claimed request_id has its job: the 597 of this run and the one of the earlier run.
    expect((await queueOf(prefix).getJobCounts('waiting')).waiting).toBe(598);
  });

  it('leaves no claimed request_id without its job: the add refused after the claim, the same enqueue again adds it', async () => {
    const prefix = nextPrefix();
    const admin = new Redis(redis.port, '127.0.0.1');
    try {
      // A real Redis condition between the claim and the add: the enqueuer's user may write the run's records, not
      // BullMQ's keys, so the add of the jobs is refused (NOPERM).
      const keys = `~${prefix}:payout-runs:runs:* ~${prefix}:payout-runs:meta`;
      await admin.call('ACL', 'SETUSER', 'enqueuer', 'reset', 'on', '>enqueuer-pass-4c2b', ...keys.split(' '), '+@all');
      const { runs } = await start({
        prefix,
        connection: { host: '127.0.0.1', port: redis.port, username: 'enqueuer', password: 'enqueuer-pass-4c2b' },
        enqueueTimeoutMs: undefined,
      });
      const ids = [`${prefix}-1`, `${prefix}-2`];
      const items = [...ids.map((id) => payout(id)), INVALID];

      const error = await runs.enqueue(items, { runId: 'failing' }).catch((e) => e);

      // The first add was refused; the second payout's job, held back until every chunk is claimed, never left.
      expectEnqueueError(error, 'error', { [ids[0]!]: 'maybe-queued', [ids[1]!]: 'not-queued' });
      expect((error as Error).message).toContain('NOPERM');
      expect((error as Error).message).not.toContain('enqueuer-pass-4c2b');
      // Claimed, without their jobs.
      expect((await runs.progress('failing'))!.counts).toMatchObject({ queued: 2, total: 2 });
      expect(await queueOf(prefix).getJob(payoutJobId(ids[0]!))).toBeUndefined();

      await admin.call('ACL', 'SETUSER', 'enqueuer', 'allkeys');
      const again = await runs.enqueue(items, { runId: 'failing' });

      expect(again.items.map((item) => item.status)).toEqual(['already-queued', 'already-queued', 'refused']);
      const done = await sendAll(prefix, ids);
      expect(done.counts).toMatchObject({ queued: 0, sent: 2, total: 2 });
      expect(ids.map((id) => provider.processedCounts().get(id))).toEqual([1, 1]);
    } finally {
      await Promise.all(apps.splice(0).map((started) => started.app.close()));
      await admin.call('ACL', 'DELUSER', 'enqueuer');
      admin.disconnect();
    }
  }, 60_000);
});
