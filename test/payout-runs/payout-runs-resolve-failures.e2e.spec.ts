import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { PayoutLedgerUnavailableError, PayoutRunResolveError } from 'nestjs-payouts';
import { payoutJobId, type PayoutRunsOptions } from 'nestjs-payouts/payout-runs';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import {
  decideWithoutQueueingJobs,
  finishedByTheJobCheck,
  payout,
  type RunsApp,
  startRunsApp,
  userWithoutJobWrites,
} from './payout-runs-test-app.js';

const PASSWORD = 'resolver-pass-7d1e';

describeWithRedis('resolveUnknown() while Redis fails', () => {
  let redis: RedisServer;
  let provider: MockPayoutsProvider;
  let admin: Redis;
  const apps: RunsApp[] = [];
  let prefixes = 0;

  beforeAll(async () => {
    redis = await RedisServer.start();
    admin = new Redis(redis.port, '127.0.0.1');
    // Each payout's first request ends with a reset connection (its outcome unknown); any later one is created.
    provider = await MockPayoutsProvider.start(
      (_requestId, seenBefore) => (seenBefore === 0 ? { kind: 'reset' } : { kind: 'created' }),
      { minLatencyMs: 1, maxLatencyMs: 5 },
    );
  });
  afterAll(async () => {
    admin?.disconnect();
    await provider?.close();
    await redis?.close();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((started) => started.app.close()));
    await admin.call('ACL', 'DELUSER', 'resolver');
  });

  const start = async (options: Partial<PayoutRunsOptions> & { prefix: string }) => {
    const started = await startRunsApp(provider.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      rateLimit: false,
      attempts: 3,
      backoffMs: 20,
      ...options,
    });
    apps.push(started);
    return started;
  };

  /** Each of `ids` parked, its unknown handler run and its job ended: a decision waits for no job then. */
  const untilParked = async (app: RunsApp, ids: string[]) => {
    await eventually(
      async () => (app.results.unknown.length >= ids.length ? true : undefined),
      20_000,
      'every payout parked',
    );
    await app.untilJobsCompleted(ids);
  };

  /** A worker that parks each of `ids` as unknown, and, beside it, an instance that decides on them as `resolver`. */
  const parked = async (ids: string[], workerOptions: Partial<PayoutRunsOptions> = {}) => {
    const prefix = `resolving${++prefixes}`;
    const worker = await start({ prefix, ...workerOptions });
    await worker.runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'resolving' },
    );
    await untilParked(worker, ids);
    await userWithoutJobWrites(admin, 'resolver', PASSWORD, prefix);
    const resolver = await start({
      prefix,
      worker: false,
      connection: { host: '127.0.0.1', port: redis.port, username: 'resolver', password: PASSWORD },
    });
    return { worker, resolver };
  };

  it('finishes a decision whose job Redis refused when it is made again: absent sends it once more, sent runs the handlers', async () => {
    const { worker, resolver } = await parked(['r-absent', 'r-sent']);

    const failures = [
      await resolver.runs.resolveUnknown('r-absent', 'absent', { by: 'ops@example.com' }).catch((e: unknown) => e),
      await resolver.runs.resolveUnknown('r-sent', 'sent', { by: 'ops@example.com' }).catch((e: unknown) => e),
    ];

    for (const [failure, requestId, decision] of [
      [failures[0], 'r-absent', 'absent'],
      [failures[1], 'r-sent', 'sent'],
    ] as const) {
      expect(failure).toBeInstanceOf(PayoutRunResolveError);
      expect(failure).toMatchObject({ requestId, decision, recorded: 'yes', retrySafe: true });
      expect((failure as Error).message).toContain(
        `The decision ${decision} on payout ${requestId} is recorded, but queueing its job again failed (Redis or ` +
          'BullMQ reported an error: NOPERM',
      );
      expect((failure as Error).message).toContain(
        'Calling resolveUnknown() again with the same decision is safe: it finishes what is left, and sends nothing ' +
          'twice.',
      );
      expect((failure as Error).message).not.toContain(PASSWORD);
    }
    // Decided, and left out of the list of unknown outcomes, but neither sent again nor handled.
    expect(await worker.runs.listUnknown()).toEqual({ total: 0, payouts: [] });
    expect((await worker.runs.progress('resolving'))!.counts).toMatchObject({ queued: 1, sent: 1, unknown: 0 });

    await admin.call('ACL', 'SETUSER', 'resolver', 'allkeys');
    expect(await resolver.runs.resolveUnknown('r-absent', 'absent', { by: 'someone else' })).toBe('resolved');
    expect(await resolver.runs.resolveUnknown('r-sent', 'sent')).toBe('resolved');
    await eventually(async () => (worker.results.sent.length === 2 ? true : undefined), 20_000, 'both sent');

    const sent = [...worker.results.sent].sort((a, b) => a.requestId.localeCompare(b.requestId));
    expect(sent).toMatchObject([
      {
        requestId: 'r-absent',
        attempt: 2,
        reply: { status: 201 },
        resolution: { decision: 'absent', by: 'ops@example.com' },
      },
      { requestId: 'r-sent', attempt: 1, resolution: { decision: 'sent', by: 'ops@example.com' } },
    ]);
    expect(provider.processedCounts().get('r-absent')).toBe(2);
    expect(provider.processedCounts().get('r-sent')).toBe(1);
    // Done once: made again, each decision finds its job run since.
    await eventually(
      async () => ((await worker.runs.progress('resolving'))?.completedAt ? true : undefined),
      20_000,
      'the run completes',
    );
    expect(await resolver.runs.resolveUnknown('r-absent', 'absent')).toBe('not-unknown');
    expect(await resolver.runs.resolveUnknown('r-sent', 'sent')).toBe('not-unknown');
    expect(resolver.logger.messages('log').filter((line) => line.includes('resolved as'))).toEqual([
      'Payout r-absent of run resolving resolved as absent by "ops@example.com"; it is sent once more under the same ' +
        'request_id',
      'Payout r-sent of run resolving resolved as sent by "ops@example.com"; the sent handlers run',
    ]);
  }, 60_000);

  it('queues the job once when two calls make the same decision again at once: the other says not-unknown', async () => {
    const { worker, resolver } = await parked(['r-twice']);
    await decideWithoutQueueingJobs(resolver.runs, [['r-twice', 'absent']]);
    await admin.call('ACL', 'SETUSER', 'resolver', 'allkeys');

    // Both read the payout and its ended job before either queues it: the second one's retry is refused.
    const outcomes = await Promise.all([
      resolver.runs.resolveUnknown('r-twice', 'absent'),
      resolver.runs.resolveUnknown('r-twice', 'absent'),
    ]);

    expect(outcomes).toEqual(['resolved', 'not-unknown']);
    await eventually(async () => (worker.results.sent.length === 1 ? true : undefined), 20_000, 'sent once more');
    expect(worker.results.sent).toMatchObject([{ requestId: 'r-twice', attempt: 2, reply: { status: 201 } }]);
    expect(provider.processedCounts().get('r-twice')).toBe(2);
    expect(resolver.logger.messages('log').filter((line) => line.includes('resolved as'))).toEqual([
      'Payout r-twice of run resolving resolved as absent by "ops@example.com"; it is sent once more under the same ' +
        'request_id',
    ]);
    expect(resolver.logger.messages('warn')).toEqual([]);
    expect(resolver.logger.messages('error')).toEqual([]);
  }, 60_000);

  it('has the worker queue the job of a decision that no one makes again, once lockDurationMs has passed', async () => {
    const ids = ['r-stranded-absent', 'r-stranded-sent'];
    const { worker, resolver } = await parked(ids, { lockDurationMs: 2000 });

    await decideWithoutQueueingJobs(resolver.runs, [
      ['r-stranded-absent', 'absent'],
      ['r-stranded-sent', 'sent'],
    ]);
    // Checked within lockDurationMs of the decisions, before the worker's check can find them.
    expect((await worker.runs.progress('resolving'))!.counts).toMatchObject({ queued: 1, sent: 1, unknown: 0 });
    expect(worker.results.sent).toEqual([]);
    // The decisions the check looks at: these two, until their jobs run.
    const decided = `${worker.runs.queue.qualifiedName}:runs:decided`;
    expect(await admin.zcard(decided)).toBe(2);
    // The instance that decided stops without deciding again; Nest's logger stays the last app's, the resolver's.
    await resolver.app.close();
    apps.splice(apps.indexOf(resolver), 1);

    // The worker's check, every lockDurationMs, finds them decided that long ago with jobs that ended before.
    await eventually(async () => (worker.results.sent.length === 2 ? true : undefined), 20_000, 'both finished');
    const sent = [...worker.results.sent].sort((a, b) => a.requestId.localeCompare(b.requestId));
    expect(sent).toMatchObject([
      { requestId: 'r-stranded-absent', attempt: 2, resolution: { decision: 'absent', by: 'ops@example.com' } },
      { requestId: 'r-stranded-sent', attempt: 1, resolution: { decision: 'sent', by: 'ops@example.com' } },
    ]);
    expect(provider.processedCounts().get('r-stranded-absent')).toBe(2);
    expect(provider.processedCounts().get('r-stranded-sent')).toBe(1);
    expect(
      resolver.logger
        .messages('warn')
        .filter((line) => line.includes('r-stranded'))
        .sort(),
    ).toEqual([finishedByTheJobCheck('r-stranded-absent', 'absent'), finishedByTheJobCheck('r-stranded-sent', 'sent')]);
    expect(
      resolver.logger
        .messages('log')
        .filter((line) => line.includes('resolved as'))
        .sort(),
    ).toEqual([
      'Payout r-stranded-absent of run resolving resolved as absent by "ops@example.com"; it is sent once more under ' +
        'the same request_id',
      'Payout r-stranded-sent of run resolving resolved as sent by "ops@example.com"; the sent handlers run',
    ]);
    await eventually(
      async () => ((await worker.runs.progress('resolving'))?.completedAt ? true : undefined),
      20_000,
      'the run completes',
    );
    expect((await worker.runs.progress('resolving'))!.counts).toMatchObject({ queued: 0, sent: 2, unknown: 0 });
    expect(worker.results.completed).toHaveLength(1);
    // Their jobs run: the next check lets them go, and the set of decisions holds nothing for ever.
    await eventually(async () => ((await admin.zcard(decided)) === 0 ? true : undefined), 20_000, 'the set emptied');
    expect(worker.results.sent).toHaveLength(2);
  }, 60_000);

  it('never carries out the other decision in place of an earlier one, finished or not', async () => {
    const { worker, resolver } = await parked(['r-other']);

    expect(await resolver.runs.resolveUnknown('r-other', 'absent').catch((e: unknown) => e)).toBeInstanceOf(
      PayoutRunResolveError,
    );
    await admin.call('ACL', 'SETUSER', 'resolver', 'allkeys');

    // Unfinished: the payout waits to be sent once more, not for its sent handlers.
    expect(await resolver.runs.resolveUnknown('r-other', 'sent')).toBe('not-unknown');
    expect(provider.processedCounts().get('r-other')).toBe(1);
    expect(worker.results.sent).toEqual([]);
    expect((await worker.runs.progress('resolving'))!.counts).toMatchObject({ queued: 1, sent: 0, unknown: 0 });

    // Finished: sent once more, and its sent handler fails at each of the job's three attempts, so that the job ends
    // failed with the payout sent, as an unfinished decision sent would leave it. Only the decision tells them apart.
    worker.results.failSent = 3;
    expect(await resolver.runs.resolveUnknown('r-other', 'absent')).toBe('resolved');
    await eventually(
      async () => ((await worker.runs.queue.getJobState(payoutJobId('r-other'))) === 'failed' ? true : undefined),
      20_000,
      'the job failed',
    );
    expect(worker.results.failSent).toBe(0);
    expect(await resolver.runs.resolveUnknown('r-other', 'sent')).toBe('not-unknown');
    expect(await worker.runs.queue.getJobState(payoutJobId('r-other'))).toBe('failed');
    expect(provider.processedCounts().get('r-other')).toBe(2);
    expect(worker.results.sent).toEqual([]);
    expect(resolver.logger.messages('log').filter((line) => line.includes('resolved as'))).toEqual([
      'Payout r-other of run resolving resolved as absent; it is sent once more under the same request_id',
    ]);
  }, 60_000);

  it('rejects progress(), listUnknown() and resolveUnknown() after enqueueTimeoutMs while Redis does not answer', async () => {
    const app = await start({ prefix: `resolving${++prefixes}`, enqueueTimeoutMs: 1000 });
    await app.runs.enqueue([payout('r-hung')], { runId: 'hung' });
    await untilParked(app, ['r-hung']);

    const failures = await redis.whileHung(() =>
      Promise.all([
        app.runs.progress('hung').catch((e: unknown) => e),
        app.runs.listUnknown().catch((e: unknown) => e),
        app.runs.resolveUnknown('r-hung', 'absent').catch((e: unknown) => e),
      ]),
    );

    const noReply = 'Redis gave no reply within enqueueTimeoutMs (1000 ms)';
    for (const [failure, operation] of [
      [failures[0], "read the run's counts"],
      [failures[1], 'list the unknown payouts'],
    ] as const) {
      expect(failure).toBeInstanceOf(PayoutLedgerUnavailableError);
      expect(failure).toMatchObject({ operation, reason: 'timeout', written: 'none', retrySafe: true });
      expect((failure as Error).message).toBe(
        `The payout ledger could not ${operation}: ${noReply}; nothing was written.`,
      );
    }
    expect(failures[2]).toBeInstanceOf(PayoutRunResolveError);
    expect(failures[2]).toMatchObject({ requestId: 'r-hung', decision: 'absent', recorded: 'no' });
    expect((failures[2] as Error).message).toBe(
      `The decision absent on payout r-hung was not recorded (${noReply}). Calling resolveUnknown() again with the ` +
        'same decision is safe: it finishes what is left, and sends nothing twice.',
    );
    // Redis back, the same call decides and the payout is sent once more.
    expect(await app.runs.resolveUnknown('r-hung', 'absent')).toBe('resolved');
    await eventually(async () => (app.results.sent.length === 1 ? true : undefined), 20_000, 'sent');
    expect(provider.processedCounts().get('r-hung')).toBe(2);
  }, 60_000);
});
