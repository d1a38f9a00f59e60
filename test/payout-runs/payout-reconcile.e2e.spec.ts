import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  type CreatePayoutRequest,
  getPayoutsHealthSourceToken,
  PayoutsApiError,
  type PayoutsHealthSource,
} from 'nestjs-payouts';
import { payoutJobId, type PayoutLookupContext, type PayoutReconcileOptions } from 'nestjs-payouts/payout-runs';
import { MockFault, MockPayoutsApi } from 'nestjs-payouts/testing';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import {
  ACCESS_TOKEN,
  API_KEY,
  payout,
  type RunsApp,
  startRunsApp,
  userWithoutJobWrites,
} from './payout-runs-test-app.js';

/** A lookup written as a user would: the provider's status endpoint, through `payouts.request()`. */
async function statusLookup(
  request: CreatePayoutRequest,
  { payouts }: PayoutLookupContext,
): Promise<'created' | 'absent'> {
  try {
    await payouts.request({ method: 'GET', path: '/payouts/{id}', params: { id: request.request_id } });
    return 'created';
  } catch (error) {
    if (error instanceof PayoutsApiError && error.status === 404) return 'absent';
    throw error;
  }
}

describeWithRedis('unknown outcomes reconciled by a lookup', () => {
  let redis: RedisServer;
  let mock: MockPayoutsApi;
  const apps: RunsApp[] = [];
  let prefixes = 0;

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.close();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((started) => started.app.close()));
    await mock?.close();
  });

  const start = async (prefix: string, reconcile: PayoutReconcileOptions, extra: object = {}) => {
    const started = await startRunsApp(mock.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix,
      rateLimit: false,
      attempts: 3,
      backoffMs: 20,
      reconcile,
      ...extra,
    });
    apps.push(started);
    return started;
  };
  const committedPerRequestId = () => {
    const counts = new Map<string, number>();
    for (const call of mock.calls) {
      if (call.committed) counts.set(call.requestId!, (counts.get(call.requestId!) ?? 0) + 1);
    }
    return counts;
  };

  it('settles every payout whose POST was lost: none created twice, none missing, none left parked', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    // 5% of POSTs are committed and then lose their reply; 5% more are lost before the provider sees them.
    mock.fail({ probability: 0.05, seed: 7, when: { method: 'POST' } }, MockFault.resetAfterCommit());
    mock.fail({ probability: 0.05, seed: 11, when: { method: 'POST' } }, MockFault.resetBeforeCommit());
    const started = await start(`reconcile${++prefixes}`, {
      lookup: statusLookup,
      settleAfterMs: 200,
      sweepEveryMs: 200,
    });
    const ids = Array.from({ length: 200 }, (_, index) => `rc-${index}`);

    await started.runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'reconcile' },
    );
    const done = await eventually(
      async () => {
        const progress = await started.runs.progress('reconcile');
        return progress?.counts.sent === ids.length && started.results.sent.length === ids.length
          ? progress
          : undefined;
      },
      60_000,
      'every payout is sent and its sent handler has run',
    );

    expect(done.counts).toMatchObject({ queued: 0, sending: 0, retrying: 0, sent: 200, refused: 0, unknown: 0 });
    expect((await started.runs.listUnknown()).total).toBe(0);
    const committed = committedPerRequestId();
    expect([...committed.keys()].sort()).toEqual([...ids].sort());
    expect([...committed.values()].every((count) => count === 1)).toBe(true);
    expect([...mock.payouts.keys()].sort()).toEqual([...ids].sort());
    expect(started.results.sent.map((result) => result.requestId).sort()).toEqual([...ids].sort());
    const reconciled = started.logger.lines.filter((line) => / resolved as (sent|absent) by reconcile/.test(line));
    const resetAfter = mock.calls.filter((call) => call.committed && call.reset).length;
    const resetBefore = mock.calls.filter((call) => !call.committed && call.reset).length;
    // The seeds lose both kinds of request; each was settled by the sweep, as the provider's lookup said.
    expect(resetAfter).toBeGreaterThan(0);
    expect(resetBefore).toBeGreaterThan(0);
    expect(reconciled.filter((line) => line.includes('resolved as sent'))).toHaveLength(resetAfter);
    expect(reconciled.filter((line) => line.includes('resolved as absent'))).toHaveLength(resetBefore);
    const source = started.app.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
    expect((await source.figures!()).reconciled).toEqual({
      created: resetAfter,
      absent: resetBefore,
      unknown: 0,
      failed: 0,
      givenUp: 0,
    });
    mock.assertNoSecretIn(started.logger.lines);
  });

  it('shuts down after shutdownTimeoutMs when Redis stops answering in the middle of a sweep', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    // Every POST is lost before the provider sees it: the payout is parked as unknown.
    mock.fail({ probability: 1, seed: 3, when: { method: 'POST' } }, MockFault.resetBeforeCommit());
    let lookedUp = false;
    // The lookup stops Redis as it answers: the sweep's next step (the next page of unknown payouts) waits for it.
    const lookup = async () => {
      redis.hang();
      lookedUp = true;
      return 'unknown' as const;
    };
    const started = await start(
      `reconcile${++prefixes}`,
      { lookup, settleAfterMs: 0, sweepEveryMs: 200 },
      { shutdownTimeoutMs: 1000 },
    );
    await started.runs.enqueue([payout('rc-hung')], { runId: 'hung' });

    apps.splice(apps.indexOf(started), 1);
    let closed: unknown;
    try {
      await eventually(async () => (lookedUp ? true : undefined), 20_000, 'the lookup');
      closed = await Promise.race([
        started.app.close().then(() => 'closed'),
        new Promise((resolve) => setTimeout(resolve, 30_000, 'still closing after 30 s')),
      ]);
    } finally {
      redis.resume();
    }

    expect(closed).toBe('closed');
    expect(started.logger.messages('warn').filter((line) => line.includes('sweep'))).toEqual([
      "The sweep of the unknown payouts of account 'default' did not end within shutdownTimeoutMs (1000 ms): it is " +
        'left to stop with the process; another instance sweeps once its lock expires',
    ]);
    expect(started.results.unknown.map((result) => result.requestId)).toEqual(['rc-hung']);
  }, 60_000);

  it('leaves the payouts parked while the lookup is unavailable, and reports them in the figures and the error log', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    mock.fail({ when: { method: 'POST' } }, MockFault.resetAfterCommit());
    // The status endpoint answers nothing in time.
    mock.fail({ when: { method: 'GET' } }, MockFault.latency(60_000));
    const started = await start(`reconcile${++prefixes}`, {
      lookup: statusLookup,
      settleAfterMs: 0,
      sweepEveryMs: 200,
      lookupTimeoutMs: 100,
      giveUpAfterMs: 1000,
    });

    await started.runs.enqueue([payout('down-1'), payout('down-2')], { runId: 'unavailable' });
    await eventually(
      async () =>
        started.logger.lines.filter((line) => line.includes('after giveUpAfterMs')).length === 2 ? true : undefined,
      30_000,
      'both payouts are given up on',
    );

    expect((await started.runs.listUnknown()).payouts.map((item) => item.requestId).sort()).toEqual([
      'down-1',
      'down-2',
    ]);
    const source = started.app.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
    const figures = await source.figures!();
    expect(figures.parked).toBe(2);
    expect(figures.reconciled).toMatchObject({ created: 0, absent: 0, unknown: 0, givenUp: 2 });
    expect(figures.reconciled!.failed).toBeGreaterThanOrEqual(2);
    expect(started.logger.lines).toContainEqual(
      expect.stringMatching(
        /^warn: Payout down-1 of run unavailable: the lookup did not answer within lookupTimeoutMs \(100 ms\); it stays parked/,
      ),
    );
    expect(
      started.logger.lines.filter((line) => line.startsWith('error:') && line.includes('after giveUpAfterMs')),
    ).toHaveLength(2);
    expect(started.results.sent).toEqual([]);
    expect(mock.payouts.size).toBe(2);
    mock.assertNoSecretIn(started.logger.lines);
  });

  it('passes over an entry of the unknown list whose record has expired, and settles the payouts after it', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    mock.fail({ when: { method: 'POST' }, times: 1 }, MockFault.resetAfterCommit());
    const prefix = `reconcile${++prefixes}`;
    const client = new Redis(redis.port, '127.0.0.1');
    // Older than any payout: a record that expired (or was deleted) while its entry stayed in the list.
    await client.zadd(`${prefix}:payout-runs:runs:unknown`, 0, 'expired-1');
    const started = await start(prefix, { lookup: statusLookup, settleAfterMs: 0, sweepEveryMs: 100 });

    await started.runs.enqueue([payout('after-1')], { runId: 'expired' });
    await eventually(
      async () => (started.results.sent.length === 1 ? true : undefined),
      30_000,
      'the payout after the expired entry is settled',
    );

    expect(started.results.sent.map((result) => result.requestId)).toEqual(['after-1']);
    expect(started.logger.lines.filter((line) => line.includes('resolved as sent by reconcile'))).toHaveLength(1);
    // The sweep ends, and lets go of its lock, rather than reading the expired entry again and again.
    try {
      await eventually(
        async () => ((await client.exists(`${prefix}:payout-runs:runs:sweep-lock`)) === 0 ? true : undefined),
        10_000,
        'the sweep lets go of its lock',
      );
    } finally {
      client.disconnect();
    }
  });

  it('looks a parked payout up only once its job has ended, not while its unknown handler still runs', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    mock.fail({ when: { method: 'POST' }, times: 2 }, MockFault.resetAfterCommit());
    const lookups: string[] = [];
    const started = await start(`reconcile${++prefixes}`, {
      // 'still-1' stays parked, so that every sweep looks it up: its lookups count the sweeps.
      lookup: async (request, context) => {
        lookups.push(request.request_id);
        return request.request_id === 'still-1' ? 'unknown' : statusLookup(request, context);
      },
      settleAfterMs: 0,
      sweepEveryMs: 100,
    });
    let release!: () => void;
    started.results.holdUnknown.set('held-1', new Promise<void>((resolve) => (release = resolve)));
    const sweepsSeen = () => lookups.filter((id) => id === 'still-1').length;

    try {
      await started.runs.enqueue([payout('still-1'), payout('held-1')], { runId: 'held' });
      await eventually(
        async () => (started.results.unknownCalled.includes('held-1') ? true : undefined),
        30_000,
        "held-1's unknown handler is running",
      );
      // Two whole sweeps while held-1 is parked and its job still runs.
      const before = sweepsSeen();
      await eventually(async () => (sweepsSeen() >= before + 2 ? true : undefined), 30_000, 'two more sweeps');
      expect(lookups).not.toContain('held-1');
    } finally {
      release();
    }
    await eventually(
      async () => (started.results.sent.some((result) => result.requestId === 'held-1') ? true : undefined),
      30_000,
      'held-1 is resolved as sent once its job has ended',
    );
    expect(lookups.filter((id) => id === 'held-1')).toEqual(['held-1']);
    expect(started.logger.lines.filter((line) => line.includes('left as it is'))).toEqual([]);
    expect(committedPerRequestId().get('held-1')).toBe(1);
  });

  it('applies no lookup answer to a payout a person resolved while the lookup ran: it is not sent again', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    mock.fail({ when: { method: 'POST' }, times: 1 }, MockFault.resetAfterCommit());
    const decisions: string[] = [];
    // The provider has the payout. While the lookup runs, a person settles it as sent; the lookup then answers
    // absent, which would send it once more if applied.
    const runs = () => started.runs;
    const started = await start(`reconcile${++prefixes}`, {
      lookup: async (request) => {
        decisions.push(await runs().resolveUnknown(request.request_id, 'sent', { by: 'ops@example.com' }));
        return 'absent' as const;
      },
      settleAfterMs: 0,
      sweepEveryMs: 100,
    });

    await started.runs.enqueue([payout('decided-1')], { runId: 'decided' });
    const leftAlone = () => started.logger.lines.filter((line) => line.includes('left as it is'));
    await eventually(async () => (leftAlone().length > 0 ? true : undefined), 30_000, 'the lookup answer left alone');
    await eventually(async () => (started.results.sent.length > 0 ? true : undefined), 30_000, 'the sent handler');

    expect(decisions).toEqual(['resolved']);
    expect(leftAlone()).toEqual([
      'log: Payout decided-1 of run decided: the lookup answered absent, but the payout is no longer of unknown ' +
        'outcome (decided meanwhile); left as it is PayoutRuns',
    ]);
    expect(started.results.sent.map((result) => result.requestId)).toEqual(['decided-1']);
    expect(started.results.sent[0]!.resolution).toMatchObject({ decision: 'sent', by: 'ops@example.com' });
    expect(committedPerRequestId()).toEqual(new Map([['decided-1', 1]]));
    expect(mock.calls.filter((call) => call.method === 'POST')).toHaveLength(1);
    expect((await started.runs.progress('decided'))?.counts).toMatchObject({ sent: 1, unknown: 0 });
    const source = started.app.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
    expect((await source.figures!()).reconciled).toMatchObject({ created: 0, absent: 0 });
  });

  it('applies no lookup answer to a payout whose job was removed while the lookup ran, and looks it up no more', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    mock.fail({ when: { method: 'POST' }, times: 2 }, MockFault.resetAfterCommit());
    const lookups: string[] = [];
    const queue = () => started.runs.queue;
    // While the lookup of removed-1 runs, someone removes its job (a dashboard's button); the lookup then answers
    // absent, which would send it once more if applied. still-1 stays unknown: each sweep looks it up.
    const started = await start(`reconcile${++prefixes}`, {
      lookup: async (request) => {
        lookups.push(request.request_id);
        if (request.request_id === 'still-1') return 'unknown' as const;
        await (await queue().getJob(payoutJobId(request.request_id)))!.remove();
        return 'absent' as const;
      },
      settleAfterMs: 0,
      sweepEveryMs: 100,
    });
    const sweepsSeen = () => lookups.filter((id) => id === 'still-1').length;

    await started.runs.enqueue([payout('removed-1'), payout('still-1')], { runId: 'removed' });
    const leftAlone = () => started.logger.lines.filter((line) => line.includes('left as it is'));
    await eventually(async () => (leftAlone().length > 0 ? true : undefined), 30_000, 'the lookup answer left alone');
    const before = sweepsSeen();
    await eventually(async () => (sweepsSeen() >= before + 2 ? true : undefined), 30_000, 'two more sweeps');

    expect(leftAlone()).toEqual([
      'log: Payout removed-1 of run removed: the lookup answered absent, but the payout is no longer found; left as it ' +
        'is PayoutRuns',
    ]);
    expect(lookups.filter((id) => id === 'removed-1')).toEqual(['removed-1']);
    expect(await queue().getJob(payoutJobId('removed-1'))).toBeUndefined();
    expect(committedPerRequestId()).toEqual(
      new Map([
        ['removed-1', 1],
        ['still-1', 1],
      ]),
    );
    expect(mock.calls.filter((call) => call.method === 'POST')).toHaveLength(2);
    expect(started.results.sent).toEqual([]);
    expect((await started.runs.listUnknown()).payouts.map((parked) => parked.requestId).sort()).toEqual([
      'removed-1',
      'still-1',
    ]);
  });

  it('applies no lookup answer to a payout whose job was taken up again meanwhile, and looks it up once the job ends', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    mock.fail({ when: { method: 'POST' }, times: 1 }, MockFault.resetAfterCommit());
    const lookups: string[] = [];
    const queue = () => started.runs.queue;
    const started = await start(`reconcile${++prefixes}`, {
      lookup: async (request, context) => {
        lookups.push(request.request_id);
        if (lookups.length === 1) {
          // While the first lookup runs, someone retries the payout's job (a dashboard's button), and it waits.
          await queue().pause();
          const job = (await queue().getJob(payoutJobId(request.request_id)))!;
          await job.retry((await job.getState()) as 'completed' | 'failed');
        }
        return statusLookup(request, context);
      },
      settleAfterMs: 0,
      sweepEveryMs: 100,
    });

    await started.runs.enqueue([payout('again-1')], { runId: 'again' });
    const later = () => started.logger.lines.filter((line) => line.includes('looked up on a later sweep'));
    await eventually(async () => (later().length > 0 ? true : undefined), 30_000, 'the answer left for later');
    expect(later()).toEqual([
      'log: Payout again-1 of run again: the lookup answered created, but its job runs again; looked up on a later ' +
        'sweep PayoutRuns',
    ]);
    expect(started.results.sent).toEqual([]);
    await queue().resume();

    await eventually(async () => (started.results.sent.length > 0 ? true : undefined), 30_000, 'resolved as sent');
    expect(lookups).toEqual(['again-1', 'again-1']);
    expect(started.results.sent.map((result) => result.requestId)).toEqual(['again-1']);
    expect(started.results.sent[0]!.resolution).toMatchObject({ decision: 'sent', by: 'reconcile' });
    expect(committedPerRequestId()).toEqual(new Map([['again-1', 1]]));
  });

  it('finishes its own decision that Redis refused to queue the job of, at its next sweeps: the payout is not stranded', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    mock.fail({ when: { method: 'POST' }, times: 1 }, MockFault.resetBeforeCommit());
    const prefix = `reconcile${++prefixes}`;
    const connection = { host: '127.0.0.1', port: redis.port };
    // An instance without the sweep sends the payout, and parks it.
    const worker = await startRunsApp(mock.baseUrl, { connection, prefix, rateLimit: false, attempts: 1 });
    apps.push(worker);
    await worker.runs.enqueue([payout('acl-1')], { runId: 'acl' });
    await eventually(async () => (worker.results.unknown.length === 1 ? true : undefined), 15_000, 'parked');
    await worker.untilJobsCompleted(['acl-1']);

    // The sweeping instance's user may write everything but the jobs: the decision is recorded, BullMQ's retry of the
    // job is refused (NOPERM) before it changes anything.
    const admin = new Redis(redis.port, '127.0.0.1');
    try {
      await userWithoutJobWrites(admin, 'sweeper', 'sweeper-password-51c3', prefix);
      const sweeper = await start(
        prefix,
        { lookup: statusLookup, settleAfterMs: 0, sweepEveryMs: 100 },
        { connection: { ...connection, username: 'sweeper', password: 'sweeper-password-51c3' }, attempts: 1 },
      );
      const unfinished = () => sweeper.logger.messages('warn').filter((line) => line.includes('at each sweep'));
      await eventually(async () => (unfinished().length > 0 ? true : undefined), 15_000, 'the decision unfinished');
      await eventually(
        async () =>
          sweeper.logger.lines.some((line) => line.includes('Sweep of the unknown payouts')) ? true : undefined,
        15_000,
        'a later sweep making it again, refused again',
      );

      expect(unfinished()).toHaveLength(1);
      expect(unfinished()[0]).toMatch(
        new RegExp(
          '^Payout acl-1 of run acl: the lookup answered absent\\. The decision absent on payout acl-1 is recorded, ' +
            'but queueing its job again failed \\(Redis or BullMQ reported an error: NOPERM .+\\)\\. Calling ' +
            'resolveUnknown\\(\\) again with the same decision is safe: it finishes what is left, and sends nothing ' +
            'twice\\. This instance makes it at each sweep$',
        ),
      );
      // Off the list of unknown outcomes, queued without a job that runs: stranded, but for the sweeps to come.
      expect(await worker.runs.listUnknown()).toEqual({ total: 0, payouts: [] });
      expect((await worker.runs.progress('acl'))!.counts).toMatchObject({ queued: 1, sent: 0, unknown: 0 });
      expect(mock.calls.filter((call) => call.method === 'POST')).toHaveLength(1);

      await admin.call('ACL', 'SETUSER', 'sweeper', 'allkeys');
      const sent = () => [...worker.results.sent, ...sweeper.results.sent];
      await eventually(async () => (sent().length === 1 ? true : undefined), 15_000, 'sent once more');

      expect(sent()).toMatchObject([
        { requestId: 'acl-1', attempt: 2, resolution: { decision: 'absent', by: 'reconcile' } },
      ]);
      expect(committedPerRequestId()).toEqual(new Map([['acl-1', 1]]));
      expect(sweeper.logger.messages('log').filter((line) => line.includes('resolved as'))).toEqual([
        'Payout acl-1 of run acl resolved as absent by reconcile: "the lookup answered absent"; it is sent once ' +
          'more under the same request_id',
      ]);
      const source = sweeper.app.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
      expect((await source.figures!()).reconciled).toMatchObject({ absent: 1, created: 0 });
      expect((await worker.runs.progress('acl'))!.counts).toMatchObject({ queued: 0, sent: 1, unknown: 0 });
    } finally {
      await Promise.all(apps.splice(0).map((started) => started.app.close()));
      await admin.call('ACL', 'DELUSER', 'sweeper');
      admin.disconnect();
    }
  });

  it('never resolves one payout twice when two instances sweep at once', async () => {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
    const ids = Array.from({ length: 20 }, (_, index) => `twice-${index}`);
    mock.fail({ when: { method: 'POST' }, times: ids.length }, MockFault.resetAfterCommit());
    const lookups: string[] = [];
    const reconcile: PayoutReconcileOptions = {
      lookup: async (request, context) => {
        lookups.push(request.request_id);
        // Slow enough that both instances' sweeps are due while one runs.
        await new Promise((resolve) => setTimeout(resolve, 20));
        return statusLookup(request, context);
      },
      settleAfterMs: 0,
      sweepEveryMs: 100,
    };
    const prefix = `reconcile${++prefixes}`;
    const [first, second] = [await start(prefix, reconcile), await start(prefix, reconcile)];

    await first.runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'twice' },
    );
    // The state is sent before the sent handlers run: wait for the handlers.
    await eventually(
      async () => (first.results.sent.length + second.results.sent.length === ids.length ? true : undefined),
      60_000,
      'every sent handler has run',
    );
    expect((await first.runs.progress('twice'))!.counts).toMatchObject({ sent: ids.length, unknown: 0 });

    const sent = [...first.results.sent, ...second.results.sent].map((result) => result.requestId);
    expect(sent.sort()).toEqual([...ids].sort());
    const resolutions = [...first.logger.lines, ...second.logger.lines].filter((line) =>
      line.includes('resolved as sent by reconcile'),
    );
    expect(resolutions).toHaveLength(ids.length);
    expect(new Set(lookups).size).toBe(ids.length);
    expect(lookups).toHaveLength(ids.length);
    expect([...committedPerRequestId().values()].every((count) => count === 1)).toBe(true);
  });
});
