import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  getPayoutsHealthSourceToken,
  PayoutRequestConflictError,
  PayoutsCallOptionsError,
  type PayoutsHealthSource,
  PayoutsModule,
  type PayoutsPayoutRunJobEvent,
  PayoutsService,
  PayoutValidationError,
} from 'nestjs-payouts';
import {
  getPayoutRunsQueueToken,
  getPayoutRunsToken,
  OnPayoutSent,
  payoutJobId,
  type PayoutRunResult,
  PayoutRunsModule,
  PayoutRunsService,
  payoutRunsQueueName,
} from 'nestjs-payouts/payout-runs';
import { refusingBaseUrl } from '../payouts/payouts-api-stub.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider, type ProviderPlan } from '../support/mock-payouts-provider.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { ACCESS_TOKEN, API_KEY, payout, RecordedResults, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

describeWithRedis('payout runs in one app', () => {
  let redis: RedisServer;
  let provider: MockPayoutsProvider | undefined;
  const apps: RunsApp[] = [];
  const queues: Queue[] = [];
  let prefixes = 0;

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.close();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((started) => started.app.close()));
    await Promise.all(queues.splice(0).map((queue) => queue.close()));
    await provider?.close();
    provider = undefined;
  });

  /** An app of its own, on a prefix of its own, so that no test sees another's payouts. */
  const start = async (plan: ProviderPlan | string, worker = true, extra: object = {}) => {
    const prefix = `runs${++prefixes}`;
    let baseUrl: string;
    if (typeof plan === 'string') {
      baseUrl = plan;
    } else {
      provider = await MockPayoutsProvider.start(plan, { minLatencyMs: 5, maxLatencyMs: 15 });
      baseUrl = provider.baseUrl;
    }
    const started = await startRunsApp(baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix,
      rateLimit: false,
      worker,
      attempts: 3,
      backoffMs: 20,
      ...extra,
    });
    apps.push(started);
    const queue = new Queue(payoutRunsQueueName(), { connection: { host: '127.0.0.1', port: redis.port }, prefix });
    queues.push(queue);
    return { ...started, queue, prefix };
  };
  /**
   * The run has nothing pending and its handlers have had each outcome: `completedAt` is set when the last outcome is
   * stored, before the handlers of that payout run.
   */
  const untilDone = (app: RunsApp, runId: string) =>
    eventually(
      async () => {
        const progress = await app.runs.progress(runId);
        if (!progress?.completedAt) return undefined;
        const { sent, refused, unknown } = app.results;
        const handled = [...sent, ...refused, ...unknown].filter((result) => result.runId === runId).length;
        const outcomes = progress.counts.sent + progress.counts.refused + progress.counts.unknown;
        const completedHandled = app.results.completed.some((summary) => summary.runId === runId);
        return handled >= outcomes && completedHandled ? progress : undefined;
      },
      15_000,
      `run ${runId} completes and its handlers have run`,
    );

  it('queues each request_id once: the same run again adds nothing, a changed body is refused and the job keeps the original', async () => {
    const { runs, queue } = await start(() => ({ kind: 'created' }), false);
    const items = [payout('a-1'), payout('a-2'), { ...payout('a-3'), amount: { value: '1,5', currency_code: 'KES' } }];

    const first = await runs.enqueue(items, { runId: 'month-end' });
    const again = await runs.enqueue(items, { runId: 'month-end' });
    const changed = await runs.enqueue([payout('a-1', '99.00'), payout('a-4')], { runId: 'month-end' });

    expect(first.items.map((item) => item.status)).toEqual(['queued', 'queued', 'refused']);
    expect(first).toMatchObject({ runId: 'month-end', queued: 2, alreadyQueued: 0, refused: 1 });
    const invalid = first.items[2]!;
    expect(invalid.status === 'refused' && invalid.error).toBeInstanceOf(PayoutValidationError);
    expect(invalid.status === 'refused' && invalid.error.message).toContain('amount.value');
    expect(again.items.map((item) => item.status)).toEqual(['already-queued', 'already-queued', 'refused']);
    expect(changed.items.map((item) => item.status)).toEqual(['refused', 'queued']);
    const conflict = changed.items[0]!;
    expect(conflict.status === 'refused' && conflict.error).toBeInstanceOf(PayoutRequestConflictError);
    expect(conflict.status === 'refused' && conflict.error).toMatchObject({ requestId: 'a-1' });
    // bullmq 5 also counts the paused list.
    expect((await queue.getJobCounts('waiting')).waiting).toBe(3);
    expect((await queue.getJob(payoutJobId('a-1')))!.data).toEqual({ request: payout('a-1'), runId: 'month-end' });
    expect((await runs.progress('month-end'))!.counts).toEqual({
      queued: 3,
      sending: 0,
      retrying: 0,
      sent: 0,
      refused: 0,
      unknown: 0,
      total: 3,
    });
  });

  it('refuses items that are not an array, a runId it cannot keep and any decision but sent or absent, queuing nothing', async () => {
    const { runs, queue } = await start(() => ({ kind: 'created' }), false);
    const refusal = (call: () => Promise<unknown>) =>
      call().then(
        () => undefined,
        (error: unknown) => error,
      );
    const untyped = runs as unknown as {
      enqueue(items: unknown, options?: unknown): Promise<unknown>;
      resolveUnknown(requestId: string, decision: unknown): Promise<unknown>;
    };

    const notAnArray = await refusal(() => untyped.enqueue({ 0: payout('o-1') }));
    const spaced = await refusal(() => runs.enqueue([payout('o-2')], { runId: 'month end' }));
    const long = await refusal(() => runs.enqueue([payout('o-3')], { runId: 'r'.repeat(101) }));
    const numbered = await refusal(() => untyped.enqueue([payout('o-4')], { runId: 2026 }));
    const decision = await refusal(() => untyped.resolveUnknown('o-1', 'maybe'));

    for (const error of [notAnArray, spaced, long, numbered, decision]) {
      expect(error).toBeInstanceOf(PayoutsCallOptionsError);
    }
    expect(notAnArray).toMatchObject({ option: 'items' });
    expect((notAnArray as Error).message).toBe(
      'Call option "items" is invalid: expected an array of payout requests. Nothing was sent.',
    );
    for (const error of [spaced, long, numbered]) {
      expect((error as Error).message).toBe(
        'Call option "runId" is invalid: expected up to 100 letters, digits, "-", "_" or ".". Nothing was sent.',
      );
    }
    expect(decision).toMatchObject({ option: 'decision' });
    expect((await runs.enqueue([payout('o-5')], { runId: 'r'.repeat(100) })).queued).toBe(1);
    expect((await queue.getJobCounts('waiting')).waiting).toBe(1);
  });

  it('fails a job it cannot read for good, at its first attempt, sending nothing', async () => {
    const { queue, logger } = await start(() => ({ kind: 'created' }));
    // Written by something else than this version's enqueue(): no request_id, a run id of the wrong type.
    await queue.add('payout', { request: { amount: '10.00' }, runId: 7 }, { jobId: 'unreadable-1', attempts: 3 });

    const failedLines = () => logger.messages('error').filter((line) => line.includes('unreadable-1'));
    await eventually(async () => (failedLines().length > 0 ? true : undefined), 15_000, 'the job failed');
    const job = (await queue.getJob('unreadable-1'))!;
    expect(await job.getState()).toBe('failed');
    expect(job.failedReason).toBe('Job unreadable-1 holds no payout this version can read; not retried');
    expect(failedLines()).toEqual([
      'Job unreadable-1 failed for good: Job unreadable-1 holds no payout this version can read; not retried. ' +
        'Job unreadable-1 stays in the failed set',
    ]);
    expect(logger.messages('warn').filter((line) => line.includes('unreadable-1'))).toEqual([]);
    expect(provider!.requests).toEqual([]);
  });

  it('queues 2,400 items of five chunks in their order, each request_id once, a repeat in a later chunk recognised', async () => {
    const { runs, queue } = await start(() => ({ kind: 'created' }), false);
    const items = Array.from({ length: 2400 }, (_, index) => payout(`c-${index}`));
    // Chunks of 500, claimed two at a time: repeats of the first chunk's items in the second and the fifth.
    items[700] = payout('c-3');
    items[2300] = payout('c-4', '99.00');

    const result = await runs.enqueue(items, { runId: 'chunks' });

    expect(result).toMatchObject({ runId: 'chunks', queued: 2398, alreadyQueued: 1, refused: 1 });
    expect(result.items[700]).toMatchObject({ index: 700, requestId: 'c-3', status: 'already-queued' });
    expect(result.items[2300]).toMatchObject({ index: 2300, requestId: 'c-4', status: 'refused' });
    expect((result.items[2300] as { error: unknown }).error).toBeInstanceOf(PayoutRequestConflictError);
    expect(result.items.filter((item) => item.status === 'queued').map((item) => item.index)).toEqual(
      Array.from({ length: 2400 }, (_, index) => index).filter((index) => index !== 700 && index !== 2300),
    );
    expect((await queue.getJobCounts('waiting')).waiting).toBe(2398);
    // Added in the order given (getWaiting lists the oldest first).
    const queuedIds = result.items
      .filter((item) => item.status === 'queued')
      .map((item) => payoutJobId(item.requestId!));
    expect((await queue.getWaiting(0, -1)).map((job) => job.id)).toEqual(queuedIds);
    expect((await runs.progress('chunks'))!.counts).toMatchObject({ queued: 2398, total: 2398 });
  });

  it('connects with a redis:// URL given as connection, as ioredis takes one', async () => {
    const started = await start(() => ({ kind: 'created' }), true, { connection: `redis://127.0.0.1:${redis.port}/0` });

    await started.runs.enqueue([payout('url-1')], { runId: 'by-url' });
    const progress = await untilDone(started, 'by-url');

    expect(progress.counts).toMatchObject({ sent: 1, total: 1 });
    expect(started.results.sent.map((result) => result.requestId)).toEqual(['url-1']);
  });

  it('keeps no credential in Redis, in what handlers receive or in the log, even when the provider echoes them', async () => {
    const echo = { error: 'invalid', echoed: `${API_KEY} Bearer ${ACCESS_TOKEN}` };
    const started = await start(() => ({ kind: 'refused', status: 400, body: echo }));

    await started.runs.enqueue([payout('k-1')], { runId: 'echo' });
    await untilDone(started, 'echo');

    const client = new Redis({ host: '127.0.0.1', port: redis.port });
    const keys = await client.keys('*');
    const stored = await Promise.all(
      keys.map(async (key) => ((await client.type(key)) === 'hash' ? JSON.stringify(await client.hgetall(key)) : key)),
    );
    client.disconnect();
    const everything = [...stored, JSON.stringify(started.results.refused), ...started.logger.lines].join('\n');
    expect(everything).toContain('k-1');
    expect(everything).toContain('[redacted]');
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(ACCESS_TOKEN);
  });

  it('keeps no credential in the job data', async () => {
    const { runs, queue } = await start(() => ({ kind: 'created' }), false);
    await runs.enqueue([payout('c-1')], { runId: 'creds' });

    const stored = JSON.stringify(await queue.getJob(payoutJobId('c-1')));

    expect(stored).toContain('c-1');
    expect(stored).not.toContain(API_KEY);
    expect(stored).not.toContain(ACCESS_TOKEN);
  });

  it('ends each payout sent, refused or unknown, once each, and pauses on 429 without using up an attempt', async () => {
    const plan: ProviderPlan = (requestId, seenBefore) => {
      if (requestId === 'o-refused') return { kind: 'refused', status: 422 };
      if (requestId === 'o-reset') return { kind: 'reset' };
      if (requestId === 'o-500') return { kind: 'failed', status: 500 };
      if (requestId === 'o-429' && seenBefore === 0) return { kind: 'throttled', status: 429, retryAfterSeconds: 1 };
      if (requestId === 'o-503' && seenBefore === 0) return { kind: 'throttled', status: 503, retryAfterSeconds: 0 };
      return { kind: 'created' };
    };
    const started = await start(plan);
    expect(started.logger.messages('log').filter((line) => line.includes(' go to '))).toEqual([
      "Account 'default': sent payouts go to RecordedResults.onSent",
      "Account 'default': refused payouts go to RecordedResults.onRefused",
      "Account 'default': payouts of unknown outcome go to RecordedResults.onUnknown",
      "Account 'default': completed runs go to RecordedResults.onCompleted",
    ]);
    const ids = ['o-created', 'o-refused', 'o-reset', 'o-500', 'o-429', 'o-503'];

    await started.runs.enqueue(
      ids.map((id) => payout(id)),
      { runId: 'outcomes' },
    );
    const done = await untilDone(started, 'outcomes');

    expect(done.counts).toEqual({ queued: 0, sending: 0, retrying: 0, sent: 3, refused: 1, unknown: 2, total: 6 });
    expect([...provider!.processedCounts()].sort()).toEqual(ids.map((id) => [id, 1]).sort());
    expect(provider!.requests.filter((request) => request.requestId === 'o-429').map((r) => r.reply)).toEqual([
      'throttled',
      'created',
    ]);
    const [created, ...throttled] = await Promise.all(
      ['o-created', 'o-429', 'o-503'].map((id) => started.queue.getJob(payoutJobId(id))),
    );
    for (const job of throttled) {
      // Started twice, yet no attempt used up beyond the one of a payout sent at once.
      expect(job!.attemptsStarted).toBe(2);
      expect(job!.attemptsMade).toBeLessThanOrEqual(created!.attemptsMade);
    }
    expect(started.logger.messages('warn').filter((line) => line.includes('failed'))).toEqual([]);
    const { results } = started;
    expect(results.sent.map((result) => [result.requestId, result.reply?.status, result.attempt]).sort()).toEqual([
      ['o-429', 201, 2],
      ['o-503', 201, 2],
      ['o-created', 201, 1],
    ]);
    expect(results.refused).toMatchObject([
      {
        requestId: 'o-refused',
        outcome: 'refused',
        runId: 'outcomes',
        error: { name: 'PayoutsApiError', status: 422 },
      },
    ]);
    expect(results.unknown.map((result) => [result.requestId, result.error?.name]).sort()).toEqual([
      ['o-500', 'PayoutsApiError'],
      ['o-reset', 'PayoutOutcomeUnknownError'],
    ]);
    expect(results.completed).toEqual([{ account: 'default', runId: 'outcomes', counts: done.counts }]);
    expect(started.logger.lines.join('\n')).not.toContain(API_KEY);
  });

  it('shuts down at once while a Retry-After pause holds the queue and no payout is being sent', async () => {
    const started = await start(() => ({ kind: 'created' }));
    // What a 429 with Retry-After: 60 does: the account's queue pauses, with the worker waiting for payouts.
    await started.runs.queue.rateLimit(60_000);

    apps.splice(apps.indexOf(started), 1);
    const closed = await Promise.race([
      started.app.close().then(() => 'closed'),
      new Promise((resolve) => setTimeout(resolve, 15_000, 'still closing after 15 s')),
    ]);

    // Well within the 30 s of shutdownTimeoutMs, and far from the 60 s pause: nothing was being sent.
    expect(closed).toBe('closed');
    expect(provider!.requests).toEqual([]);
    expect(started.logger.messages('warn').filter((line) => line.includes('shutdownTimeoutMs'))).toEqual([]);
  }, 40_000);

  it("says that no payout is being sent when only a job's completion held the close up past shutdownTimeoutMs", async () => {
    const started = await start(() => ({ kind: 'created' }), true, { shutdownTimeoutMs: 5000 });
    const health = started.app.get<PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
    const release = provider!.hold('closing-1');
    // The attempt's end, its outcome stored and its handlers run: Redis stops just before the job's completion.
    started.app.get(PayoutsService).on('payoutRunJob', () => redis.hang());
    await started.runs.enqueue([payout('closing-1')], { runId: 'closing' });
    await eventually(async () => (provider!.requests.length === 1 ? true : undefined), 15_000, 'the request out');

    apps.splice(apps.indexOf(started), 1);
    const closing = started.app.close();
    const timedOut = () => started.logger.messages('warn').filter((line) => line.includes('shutdownTimeoutMs'));
    try {
      // The worker is no longer reported once its close has begun, with the payout still being sent.
      await eventually(async () => (health.worker!() === undefined ? true : undefined), 15_000, 'the close begun');
      release();
      await eventually(async () => (timedOut().length > 0 ? true : undefined), 20_000, 'the close timed out');
    } finally {
      redis.resume();
    }
    await closing;

    expect(timedOut()).toEqual([
      'No payout is being sent, but Redis had not answered the worker after shutdownTimeoutMs (5000 ms): it is ' +
        'left to stop with the process. A job whose outcome is recorded but not its completion is taken up by ' +
        'another worker once its lock expires, which sends nothing again and runs its result handlers',
    ]);
    expect(started.results.sent.map((result) => result.requestId)).toEqual(['closing-1']);
    expect(provider!.requests.map((request) => request.requestId)).toEqual(['closing-1']);
    // Redis back, the completion it had not taken goes through: the job ends completed, not stalled.
    const jobId = payoutJobId('closing-1');
    await eventually(
      async () => ((await started.queue.getJobState(jobId)) === 'completed' ? true : undefined),
      15_000,
      'the job completed',
    );
    // Read once completed: a job read before keeps what it held then.
    expect((await started.queue.getJob(jobId))!.returnvalue).toBe('sent');
  }, 60_000);

  it('counts every request sent in requestsSent, 429s included, and the job attempts apart in payoutRunJob', async () => {
    const plan: ProviderPlan = (_requestId, seenBefore) =>
      seenBefore < 4 ? { kind: 'throttled', status: 429, retryAfterSeconds: 0 } : { kind: 'created' };
    const started = await start(plan, true, { attempts: 2 });
    const jobs: PayoutsPayoutRunJobEvent[] = [];
    started.app.get(PayoutsService).on('payoutRunJob', (event) => jobs.push(event));

    await started.runs.enqueue([payout('t-1')], { runId: 'throttled' });
    await untilDone(started, 'throttled');
    // The job's event comes once its attempt has ended, after the result handlers.
    await eventually(async () => (jobs.at(-1)?.outcome === 'sent' ? true : undefined), 15_000, 'the last job event');

    expect(provider!.requests.map((request) => request.reply)).toEqual([
      'throttled',
      'throttled',
      'throttled',
      'throttled',
      'created',
    ]);
    expect(started.results.sent).toMatchObject([{ requestId: 't-1', requestsSent: 5, attempt: 5 }]);
    // Four pauses used up none of the job's two attempts: each ran as its first.
    expect(jobs.map((job) => [job.attempt, job.outcome])).toEqual([
      [1, 'retrying'],
      [1, 'retrying'],
      [1, 'retrying'],
      [1, 'retrying'],
      [1, 'sent'],
    ]);
  });

  it('retries a payout that surely was not sent, and refuses it after the last attempt', async () => {
    const started = await start(await refusingBaseUrl());

    await started.runs.enqueue([payout('n-1')], { runId: 'no-connection' });
    const done = await untilDone(started, 'no-connection');

    expect(done.counts).toMatchObject({ refused: 1, unknown: 0, total: 1 });
    expect(started.results.refused).toMatchObject([
      { requestId: 'n-1', attempt: 3, error: { name: 'PayoutsNetworkError' } },
    ]);
  });

  /** BullMQ's mark on a job that stalled more than its limit: the next worker to take it fails it without running it. */
  const markStalledTooOften = async (queue: Queue, requestId: string) => {
    const client = new Redis(redis.port, '127.0.0.1');
    try {
      const jobKey = `${queue.qualifiedName}:${payoutJobId(requestId)}`;
      expect(await client.hset(jobKey, 'defa', 'job stalled more than allowable limit')).toBe(1);
    } finally {
      client.disconnect();
    }
  };
  /** A worker of the queue at `prefix`, in an app of its own, against the test's provider. */
  const startWorkerOn = async (prefix: string) => {
    const worker = await startRunsApp(provider!.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port },
      prefix,
      rateLimit: false,
    });
    apps.push(worker);
    return worker;
  };

  /** The error lines of `worker` that name a job which stalled too often, once it has written one. */
  const stalledJobLines = async (worker: RunsApp) => {
    const named = () => worker.logger.messages('error').filter((line) => line.includes('stalled too often'));
    await eventually(async () => (named().length > 0 ? true : undefined), 15_000, 'the job named');
    return named();
  };

  it('parks as unknown a payout whose job BullMQ failed for stalling too often, and runs its job again for its handlers', async () => {
    const web = await start(() => ({ kind: 'created' }), false);
    await web.runs.enqueue([payout('s-1')], { runId: 'stalled' });
    // What a worker leaves when it dies after writing the marker, and BullMQ once the job stalled too often.
    expect(await web.runs.store.begin('s-1', 'stalled', 'the-dead-workers-token', false)).toMatchObject({
      step: 'send',
    });
    await markStalledTooOften(web.queue, 's-1');

    const worker = await startWorkerOn(web.prefix);
    const progress = await eventually(
      async () => {
        const current = await web.runs.progress('stalled');
        return current?.counts.unknown === 1 ? current : undefined;
      },
      15_000,
      'the payout is parked',
    );

    expect(progress.counts).toMatchObject({ queued: 0, sending: 0, unknown: 1, total: 1 });
    expect((await web.runs.listUnknown()).payouts).toMatchObject([
      { requestId: 's-1', error: { name: 'Interrupted' } },
    ]);
    // Its job runs again, as a parked payout's does, for the handlers of its unknown outcome and of its run's end.
    await eventually(
      async () => ((await (await web.queue.getJob(payoutJobId('s-1')))!.getState()) === 'completed' ? true : undefined),
      15_000,
      'its job completed',
    );
    expect(worker.results.unknown).toMatchObject([
      { requestId: 's-1', runId: 'stalled', outcome: 'unknown', error: { name: 'Interrupted' } },
    ]);
    expect(worker.results.completed).toMatchObject([{ runId: 'stalled', counts: { unknown: 1, total: 1 } }]);
    expect(provider!.requests).toEqual([]);
    expect(worker.logger.messages('warn')).toContain(
      'Payout s-1 of run stalled stalled too often; parked as unknown, not sent again; its job runs again for its ' +
        'handlers',
    );
    expect(worker.logger.messages('error')).toEqual([]);
  });

  it('names the job of a payout whose job stalled too often before any request left: never sent until retried', async () => {
    const web = await start(() => ({ kind: 'created' }), false);
    await web.runs.enqueue([payout('q-1')], { runId: 'stalled-queued' });
    // BullMQ's mark on a job that stalled too often, none of whose attempts wrote the payout's marker.
    await markStalledTooOften(web.queue, 'q-1');

    const worker = await startWorkerOn(web.prefix);

    expect(await stalledJobLines(worker)).toEqual([
      'Payout q-1 of run stalled-queued stalled too often before any request left: it is still queued, never sent. ' +
        `Retry job ${payoutJobId('q-1')} from the failed set to send it`,
    ]);
    expect((await web.runs.progress('stalled-queued'))!.counts).toMatchObject({ queued: 1, sending: 0, total: 1 });
    expect(await (await web.queue.getJob(payoutJobId('q-1')))!.getState()).toBe('failed');
    expect(provider!.requests).toEqual([]);

    // Retried as the line says: sent, once.
    await (await web.queue.getJob(payoutJobId('q-1')))!.retry('failed');
    await eventually(async () => (worker.results.sent.length === 1 ? true : undefined), 15_000, 'sent');
    expect(worker.results.sent).toMatchObject([{ requestId: 'q-1', runId: 'stalled-queued', requestsSent: 1 }]);
    expect(provider!.requests.map((request) => request.requestId)).toEqual(['q-1']);
  });

  it('names the job of a retrying payout whose job stalled too often before its next request left: sent once retried', async () => {
    const web = await start(() => ({ kind: 'created' }), false);
    await web.runs.enqueue([payout('r-1')], { runId: 'stalled-retrying' });
    // What a worker leaves after an attempt the provider did not take (a 503), then BullMQ's mark on the job once
    // its next attempts stalled too often before any wrote the marker.
    expect(await web.runs.store.begin('r-1', 'stalled-retrying', 'the-first-attempts-token', false)).toMatchObject({
      step: 'send',
      attempt: 1,
    });
    expect(
      await web.runs.store.settle('r-1', 'stalled-retrying', 'the-first-attempts-token', 'retrying', {
        error: { status: 503 },
      }),
    ).toBe('settled');
    await markStalledTooOften(web.queue, 'r-1');

    const worker = await startWorkerOn(web.prefix);

    expect(await stalledJobLines(worker)).toEqual([
      "Payout r-1 of run stalled-retrying stalled too often before its next attempt's request left: it is still " +
        `retrying, nothing sent since its last attempt. Retry job ${payoutJobId('r-1')} from the failed set to send it`,
    ]);
    expect((await web.runs.progress('stalled-retrying'))!.counts).toMatchObject({ retrying: 1, sending: 0, total: 1 });
    expect(await (await web.queue.getJob(payoutJobId('r-1')))!.getState()).toBe('failed');
    expect(provider!.requests).toEqual([]);

    // Retried as the line says: its second attempt is sent, once (two requests in all, the first the one refused).
    await (await web.queue.getJob(payoutJobId('r-1')))!.retry('failed');
    await eventually(async () => (worker.results.sent.length === 1 ? true : undefined), 15_000, 'sent');
    expect(worker.results.sent).toMatchObject([
      { requestId: 'r-1', runId: 'stalled-retrying', attempt: 2, requestsSent: 2 },
    ]);
    expect(provider!.requests.map((request) => request.requestId)).toEqual(['r-1']);
  });

  it('keeps a payout parked when the worker that lost its lock gets the reply after another parked it', async () => {
    provider = await MockPayoutsProvider.start(() => ({ kind: 'created' }), { minLatencyMs: 800, maxLatencyMs: 900 });
    const started = await start(provider.baseUrl);
    await started.runs.enqueue([payout('l-1')], { runId: 'lost-lock' });
    await eventually(
      async () => ((await started.runs.progress('lost-lock'))?.counts.sending === 1 ? true : undefined),
      15_000,
      'the request is in flight',
    );
    // What the worker that takes the job up after the lock expired does: it parks the payout.
    expect(
      await started.runs.store.settle('l-1', 'lost-lock', '*', 'unknown', { error: { name: 'Interrupted' } }),
    ).toBe('completed');

    await eventually(
      async () => (started.logger.lines.some((line) => line.includes('after it was parked')) ? true : undefined),
      15_000,
      'the late reply',
    );
    expect(started.logger.lines.join('\n')).toContain(
      'Payout l-1 of run lost-lock ended sent after it was parked as unknown (this worker had lost its lock); ' +
        'resolve it with that in mind',
    );
    expect((await started.runs.progress('lost-lock'))!.counts).toMatchObject({ sending: 0, sent: 0, unknown: 1 });
    expect(started.results.sent).toEqual([]);
    expect(provider.requests.map((request) => request.requestId)).toEqual(['l-1']);
  });

  it('answers busy to a decision on an unknown payout whose handlers are still being retried', async () => {
    const started = await start(() => ({ kind: 'reset' }), true, { backoffMs: 60_000 });
    started.results.failUnknown = 1;
    await started.runs.enqueue([payout('b-1')], { runId: 'busy' });
    await eventually(
      async () =>
        (await (await started.queue.getJob(payoutJobId('b-1')))?.getState()) === 'delayed' ? true : undefined,
      15_000,
      'the unknown handler failed and is retried later',
    );

    expect(await started.runs.resolveUnknown('b-1', 'sent', { by: 'ops@example.com' })).toBe('busy');
    expect((await started.runs.listUnknown()).payouts.map((item) => item.requestId)).toEqual(['b-1']);
    expect((await started.runs.progress('busy'))!.counts).toMatchObject({ sent: 0, unknown: 1 });
    expect(started.results.sent).toEqual([]);
    expect(provider!.requests.map((request) => request.requestId)).toEqual(['b-1']);
  });

  it('sends an unknown outcome again under the same request_id only with providerDedupesRequestId', async () => {
    const plan: ProviderPlan = (_requestId, seenBefore) => (seenBefore === 0 ? { kind: 'reset' } : { kind: 'created' });
    const started = await start(plan, true, { providerDedupesRequestId: true });

    await started.runs.enqueue([payout('d-1')], { runId: 'dedupes' });
    const done = await untilDone(started, 'dedupes');

    expect(done.counts).toMatchObject({ sent: 1, unknown: 0, total: 1 });
    expect(provider!.requests.map((request) => [request.requestId, request.reply])).toEqual([
      ['d-1', 'reset'],
      ['d-1', 'created'],
    ]);
    expect(started.results.sent).toMatchObject([{ requestId: 'd-1', attempt: 2 }]);
    expect(started.results.unknown).toEqual([]);
  });

  it('runs a throwing sent handler again without sending the payout again', async () => {
    const started = await start(() => ({ kind: 'created' }));
    started.results.failSent = 2;

    await started.runs.enqueue([payout('h-1')], { runId: 'handlers' });
    await eventually(async () => (started.results.sent.length > 0 ? true : undefined), 15_000, 'the handler succeeds');

    expect(started.results.sent).toMatchObject([{ requestId: 'h-1', outcome: 'sent' }]);
    expect(provider!.requests.map((request) => request.requestId)).toEqual(['h-1']);
  });

  it('resolves an unknown outcome: absent sends it once more under the same request_id, sent runs the sent handlers once', async () => {
    const plan: ProviderPlan = (_requestId, seenBefore) => (seenBefore === 0 ? { kind: 'reset' } : { kind: 'created' });
    const started = await start(plan);
    await started.runs.enqueue([payout('u-absent'), payout('u-sent')], { runId: 'resolve' });
    await untilDone(started, 'resolve');

    const listed = await started.runs.listUnknown();
    expect(listed.total).toBe(2);
    expect(listed.payouts.map((item) => [item.requestId, item.runId, item.attempt, item.error?.code]).sort()).toEqual([
      ['u-absent', 'resolve', 1, 'ECONNRESET'],
      ['u-sent', 'resolve', 1, 'ECONNRESET'],
    ]);

    await started.untilJobsCompleted(['u-absent', 'u-sent']);
    expect(await started.runs.resolveUnknown('u-absent', 'absent', { by: 'ops@example.com' })).toBe('resolved');
    expect(
      await started.runs.resolveUnknown('u-sent', 'sent', { by: 'ops@example.com', note: 'seen in the portal' }),
    ).toBe('resolved');
    await eventually(async () => (started.results.sent.length === 2 ? true : undefined), 15_000, 'both sent');
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(provider!.requests.map((request) => request.requestId).sort()).toEqual(['u-absent', 'u-absent', 'u-sent']);
    const sent = [...started.results.sent].sort((a, b) => a.requestId.localeCompare(b.requestId));
    expect(sent).toMatchObject([
      {
        requestId: 'u-absent',
        reply: { status: 201 },
        attempt: 2,
        resolution: { decision: 'absent', by: 'ops@example.com' },
      },
      {
        requestId: 'u-sent',
        attempt: 1,
        resolution: { decision: 'sent', by: 'ops@example.com', note: 'seen in the portal' },
      },
    ]);
    expect(sent[1]!.reply).toBeUndefined();
    expect(await started.runs.listUnknown()).toEqual({ total: 0, payouts: [] });
    expect((await started.runs.progress('resolve'))!.counts).toMatchObject({ sent: 2, unknown: 0 });
    expect(await started.runs.resolveUnknown('u-sent', 'absent')).toBe('not-unknown');
    expect(await started.runs.resolveUnknown('nobody', 'sent')).toBe('not-found');
    expect(started.logger.messages('log').filter((line) => line.includes('resolved as'))).toEqual([
      'Payout u-absent of run resolve resolved as absent by "ops@example.com"; it is sent once more under the same request_id',
      'Payout u-sent of run resolve resolved as sent by "ops@example.com": "seen in the portal"; the sent handlers run',
    ]);
  });
});

describeWithRedis('payout runs of several accounts', () => {
  let redis: RedisServer;
  let provider: MockPayoutsProvider;
  beforeAll(async () => {
    redis = await RedisServer.start();
    provider = await MockPayoutsProvider.start(() => ({ kind: 'created' }), { minLatencyMs: 1, maxLatencyMs: 5 });
  });
  afterAll(async () => {
    await provider?.close();
    await redis?.close();
  });

  @Injectable()
  class EuResults {
    readonly sent: PayoutRunResult[] = [];

    @OnPayoutSent({ account: 'eu' })
    onSent(result: PayoutRunResult): void {
      this.sent.push(result);
    }
  }

  const registration = (name?: string) =>
    PayoutsModule.forRoot({
      ...(name !== undefined && { name }),
      baseUrl: provider.baseUrl,
      apiKey: API_KEY,
      accessToken: ACCESS_TOKEN,
      notifications: false,
    });

  it('keeps one queue per account, and gives each handler the accounts it names', async () => {
    const connection = { host: '127.0.0.1', port: redis.port };
    @Module({
      imports: [
        registration(),
        registration('eu'),
        PayoutRunsModule.forRoot({ connection, rateLimit: false, prefix: 'accounts' }),
        PayoutRunsModule.forRoot({
          account: 'eu',
          connection,
          rateLimit: { max: 20, durationMs: 1000 },
          prefix: 'accounts',
        }),
      ],
      providers: [RecordedResults, EuResults],
    })
    class AccountsModule {}
    const app = await NestFactory.createApplicationContext(AccountsModule, { logger: false });
    try {
      const main = app.get<PayoutRunsService>(getPayoutRunsToken());
      const eu = app.get<PayoutRunsService>(getPayoutRunsToken('eu'));
      // The unnamed account's runs by their class, as PayoutsService; a named account's by its token only.
      expect(app.get(PayoutRunsService)).toBe(main);
      expect(main.account).toBe('default');
      expect(eu).toBeInstanceOf(PayoutRunsService);
      expect(eu.account).toBe('eu');
      expect(eu).not.toBe(main);
      // The same request_id in two accounts: two payouts, one per account.
      await main.enqueue([payout('acc-1')], { runId: 'main-run' });
      await eu.enqueue([payout('acc-1'), payout('acc-2')], { runId: 'eu-run' });
      const results = app.get(RecordedResults);
      const euResults = app.get(EuResults);
      await eventually(
        async () => (results.sent.length === 3 && euResults.sent.length === 2 ? true : undefined),
        15_000,
        'all sent',
      );

      expect(main.queue.name).toBe('payout-runs');
      expect(eu.queue.name).toBe('payout-runs-eu');
      expect(app.get(getPayoutRunsQueueToken('eu'))).toBe(eu.queue);
      expect(results.sent.map((result) => [result.account, result.requestId]).sort()).toEqual([
        ['default', 'acc-1'],
        ['eu', 'acc-1'],
        ['eu', 'acc-2'],
      ]);
      expect(euResults.sent.every((result) => result.account === 'eu')).toBe(true);
      expect((await eu.progress('eu-run'))!.counts).toMatchObject({ sent: 2, total: 2 });
    } finally {
      await app.close();
    }
  });

  it('reads the options from a factory with forRootAsync, the account given up front', async () => {
    const connection = { host: '127.0.0.1', port: redis.port };
    const CONFIG = 'RUNS_CONFIG';
    @Module({ providers: [{ provide: CONFIG, useValue: { prefix: 'async' } }], exports: [CONFIG] })
    class ConfigModule {}
    @Module({
      imports: [
        registration('eu'),
        PayoutRunsModule.forRootAsync({
          account: 'eu',
          imports: [ConfigModule],
          inject: [CONFIG],
          useFactory: (config: { prefix: string }) => ({ connection, prefix: config.prefix, rateLimit: false }),
        }),
      ],
      providers: [EuResults],
    })
    class AsyncModule {}
    @Module({
      imports: [
        registration('eu'),
        PayoutRunsModule.forRootAsync({
          account: 'eu',
          useFactory: () => ({ account: 'eu', connection, rateLimit: false }) as never,
        }),
      ],
    })
    class AccountInFactoryModule {}

    const app = await NestFactory.createApplicationContext(AsyncModule, { logger: false });
    try {
      const eu = app.get<PayoutRunsService>(getPayoutRunsToken('eu'));
      await eu.enqueue([payout('async-1')], { runId: 'async' });
      await eventually(async () => (app.get(EuResults).sent.length === 1 ? true : undefined), 15_000, 'sent');
      expect(eu.queue.qualifiedName).toBe('async:payout-runs-eu');
    } finally {
      await app.close();
    }
    await expect(
      NestFactory.createApplicationContext(AccountInFactoryModule, { logger: false, abortOnError: false }),
    ).rejects.toThrow(
      'PayoutRunsModule option "account" is invalid: expected the account given to forRootAsync(), not by its factory.',
    );
  });

  it('fails the bootstrap when the account names no PayoutsModule registration', async () => {
    @Module({
      imports: [
        registration(),
        PayoutRunsModule.forRoot({
          account: 'ke',
          connection: { host: '127.0.0.1', port: redis.port },
          rateLimit: false,
        }),
      ],
    })
    class MissingAccountModule {}

    await expect(
      NestFactory.createApplicationContext(MissingAccountModule, { logger: false, abortOnError: false }),
    ).rejects.toThrow(
      `PayoutRunsModule option "account" is invalid: expected the name of a PayoutsModule registration of the app, but there is none named 'ke'.`,
    );
  });
});
