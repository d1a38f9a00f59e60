import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  getPayoutsHealthSourceToken,
  PayoutLedgerUnavailableError,
  PayoutRequestConflictError,
  PayoutRunEnqueueError,
  PayoutRunResolveError,
  type PayoutsHealthSource,
} from 'nestjs-payouts';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { payoutJobId, type PayoutRunsOptions } from 'nestjs-payouts/payout-runs';
import {
  ACCESS_TOKEN,
  API_KEY,
  decideWithoutQueueingJobs,
  finishedByTheJobCheck,
  payout,
  type RunsApp,
  startRunsApp,
  userWithoutJobWrites,
} from '../payout-runs/payout-runs-test-app.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider, type ProviderPlan } from '../support/mock-payouts-provider.js';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { freshDatabase, rowsOf } from './payout-ledger-test-support.js';

describeWithPostgres('payout runs on the PostgreSQL ledger', () => {
  describeWithRedis('in one app, against a real PostgreSQL and Redis', () => {
    let server: PostgresServer;
    let redis: RedisServer;
    let provider: MockPayoutsProvider | undefined;
    const pools: pg.Pool[] = [];
    const apps: RunsApp[] = [];
    let prefixes = 0;

    beforeAll(async () => {
      [server, redis] = await Promise.all([PostgresServer.start(), RedisServer.start()]);
    }, 60_000);
    afterAll(async () => {
      await Promise.all([server?.close(), redis?.close()]);
    });
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((started) => started.app.close()));
      await Promise.all(pools.splice(0).map((pool) => pool.end()));
      await provider?.close();
      provider = undefined;
    });

    /** A database, a Redis prefix and a provider of the test's own, and an app with its runs on that ledger. */
    const start = async (plan: ProviderPlan, extra: Partial<PayoutRunsOptions> = {}, ledger = true) => {
      const { pool } = await freshDatabase(server);
      pools.push(pool);
      provider = await MockPayoutsProvider.start(plan, { minLatencyMs: 5, maxLatencyMs: 15 });
      const started = await startRunsApp(provider.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: `ledger${++prefixes}`,
        rateLimit: false,
        attempts: 3,
        backoffMs: 20,
        ...(ledger && { ledger: payoutLedgerPostgres({ pool, migrate: true, timeoutMs: 2000 }) }),
        ...extra,
      });
      apps.push(started);
      return { ...started, pool, api: provider };
    };
    /** Empties the Redis of every spec here, as a restart that lost its data would: jobs, queues and store alike. */
    const flushRedis = async () => {
      const client = new Redis({ host: '127.0.0.1', port: redis.port });
      try {
        await client.flushall();
      } finally {
        client.disconnect();
      }
    };
    /** Enqueues `ids` as run `runId`; resolves once each is parked and its job ended: a decision waits for no job. */
    const parkedRun = async ({ runs, results, untilJobsCompleted }: RunsApp, ids: string[], runId: string) => {
      await runs.enqueue(
        ids.map((id) => payout(id)),
        { runId },
      );
      await eventually(async () => (results.unknown.length === ids.length ? true : undefined), 30_000, 'parked');
      await untilJobsCompleted(ids);
    };
    const untilCompleted = (app: RunsApp, runId: string, timeoutMs = 30_000) =>
      eventually(
        async () => {
          const progress = await app.runs.progress(runId);
          return progress?.completedAt ? progress : undefined;
        },
        timeoutMs,
        `run ${runId} completes`,
      );
    /**
     * What the health source reports of `started`'s worker when it logs a line of `level` holding `text`: whether the
     * worker's close had begun then. `'not logged'` until it does.
     */
    const workerWhenLogged = (started: RunsApp, level: 'warn' | 'error', text: string) => {
      const health = started.app.get<PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
      const seen: { worker: unknown } = { worker: 'not logged' };
      const log = started.logger[level].bind(started.logger);
      started.logger[level] = (...args: unknown[]) => {
        if (String(args[0]).includes(text)) seen.worker = health.worker!();
        log(...args);
      };
      return seen;
    };
    /** Closes `started` (left out of the closes after the test): `'closed'`, or what it still does after 30 s. */
    const closeWithin30s = (started: RunsApp) => {
      apps.splice(
        apps.findIndex((app) => app.app === started.app),
        1,
      );
      return Promise.race([
        started.app.close().then(() => 'closed'),
        new Promise((resolve) => setTimeout(resolve, 30_000, 'still closing after 30 s')),
      ]);
    };
    /** The connections whose decision on an unknown outcome waits for a row another transaction holds. */
    const decisionsWaiting = async (pool: pg.Pool) =>
      (
        await rowsOf(
          pool,
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%payout_resolve%'`,
        )
      ).map((row) => row.pid as number);
    const statesOf = async (pool: pg.Pool) =>
      Object.fromEntries(
        (await rowsOf(pool, 'SELECT state, count(*)::integer AS n FROM nestjs_payouts.payouts GROUP BY state')).map(
          (row) => [row.state, row.n],
        ),
      );

    it('keeps each payout as a row: its request, state, attempts, outcome, resolution and the time of each step', async () => {
      const plan: ProviderPlan = (requestId) =>
        requestId === 'p-refused'
          ? { kind: 'refused', status: 422 }
          : requestId === 'p-unknown'
            ? { kind: 'failed', status: 500 }
            : { kind: 'created' };
      const { runs, results, pool, untilJobsCompleted } = await start(plan);
      const items = [
        ...Array.from({ length: 8 }, (_, i) => payout(`p-${i}`)),
        payout('p-refused'),
        payout('p-unknown'),
      ];

      const first = await runs.enqueue(items, { runId: 'month-end' });
      const progress = await untilCompleted({ runs } as RunsApp, 'month-end');
      const again = await runs.enqueue([payout('p-1'), payout('p-2', '99.00')], { runId: 'other' });

      expect(first).toMatchObject({ runId: 'month-end', queued: 10, alreadyQueued: 0, refused: 0 });
      expect(progress.counts).toEqual({
        queued: 0,
        sending: 0,
        retrying: 0,
        sent: 8,
        refused: 1,
        unknown: 1,
        total: 10,
      });
      expect(again.items.map((item) => item.status)).toEqual(['already-queued', 'refused']);
      expect(again.items[1]!.status === 'refused' && again.items[1]!.error).toBeInstanceOf(PayoutRequestConflictError);
      expect(await runs.progress('other')).toBeUndefined();
      // Each payout's handlers run once its outcome is committed: the other payouts' may follow the run's own.
      await eventually(
        async () =>
          results.completed.length === 1 &&
          results.sent.length === 8 &&
          results.refused.length === 1 &&
          results.unknown.length === 1
            ? true
            : undefined,
        10_000,
        "the run handler and every payout's handler",
      );
      expect(results.completed).toEqual([{ account: 'default', runId: 'month-end', counts: progress.counts }]);
      expect(results.sent.map((result) => result.requestId).sort()).toEqual(
        Array.from({ length: 8 }, (_, i) => `p-${i}`),
      );
      expect(results.sent[0]).toMatchObject({ outcome: 'sent', attempt: 1, reply: { status: 201 } });
      expect(results.refused).toMatchObject([{ requestId: 'p-refused', outcome: 'refused', error: { status: 422 } }]);
      expect(results.unknown).toMatchObject([{ requestId: 'p-unknown', outcome: 'unknown', error: { status: 500 } }]);

      const [stored] = await rowsOf(
        pool,
        `SELECT account, run_id, state, attempt, request, fingerprint, outcome, token, queued_at IS NOT NULL AS queued,
           sending_at IS NOT NULL AS sending, settled_at >= sending_at AND sending_at >= queued_at AS ordered
         FROM nestjs_payouts.payouts WHERE request_id = 'p-3'`,
      );
      expect(stored).toEqual({
        account: 'default',
        run_id: 'month-end',
        state: 'sent',
        attempt: 1,
        request: payout('p-3'),
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        outcome: { reply: { status: 201, body: { id: 'po_p-3', status: 'pending' } } },
        // The attempt that wrote the mark, kept with the outcome it recorded.
        token: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        queued: true,
        sending: true,
        ordered: true,
      });
      const dump = (await rowsOf(pool, 'SELECT p::text AS row FROM nestjs_payouts.payouts p')).map((r) => r.row);
      expect(dump.join('\n')).not.toContain(ACCESS_TOKEN);
      expect(dump.join('\n')).not.toContain(API_KEY);

      expect(await runs.listUnknown()).toMatchObject({
        total: 1,
        payouts: [{ requestId: 'p-unknown', runId: 'month-end', attempt: 1, error: { status: 500 } }],
      });
      await untilJobsCompleted(['p-unknown']);
      expect(
        await runs.resolveUnknown('p-unknown', 'sent', { by: 'ops@example.com', note: 'seen in the portal' }),
      ).toBe('resolved');
      await eventually(async () => (results.sent.length === 9 ? true : undefined), 10_000, 'the sent handler');
      expect(results.sent[8]).toMatchObject({
        requestId: 'p-unknown',
        resolution: { decision: 'sent', by: 'ops@example.com', note: 'seen in the portal', at: expect.any(String) },
      });
      expect(
        await rowsOf(
          pool,
          `SELECT state, resolution_decision, resolved_by, resolution_note, resolved_at IS NOT NULL AS at
           FROM nestjs_payouts.payouts WHERE request_id = 'p-unknown'`,
        ),
      ).toEqual([
        {
          state: 'sent',
          resolution_decision: 'sent',
          resolved_by: 'ops@example.com',
          resolution_note: 'seen in the portal',
          at: true,
        },
      ]);
      expect(await runs.listUnknown()).toEqual({ total: 0, payouts: [] });
      expect(await statesOf(pool)).toEqual({ sent: 9, refused: 1 });

      // The three queries of the guide, as printed there, on this run.
      const [unknownSql, totalsSql, beneficiarySql] = [
        ...readFileSync(new URL('../../docs/payout-ledger.md', import.meta.url), 'utf8').matchAll(
          /```sql\n([\s\S]*?)```/g,
        ),
      ].map((match) => match[1]!.replace("'sellers-2025-03'", "'month-end'"));
      expect(await rowsOf(pool, unknownSql!)).toEqual([]);
      expect(await rowsOf(pool, totalsSql!)).toEqual([
        { state: 'refused', currency: 'KES', payouts: '1', amount: '10.00' },
        { state: 'sent', currency: 'KES', payouts: '9', amount: '90.00' },
      ]);
      const paid = await rowsOf(pool, beneficiarySql!);
      expect(paid).toHaveLength(9);
      expect(paid.find((row) => row.request_id === 'p-unknown')).toMatchObject({
        amount: '10.00',
        currency: 'KES',
        provider_id: null,
        resolution_decision: 'sent',
        resolved_by: 'ops@example.com',
      });
      expect(paid.find((row) => row.request_id === 'p-0')).toMatchObject({
        provider_id: 'po_p-0',
        resolution_decision: null,
      });
    });

    it('PostgreSQL stopped mid-run: enqueue rejects with the typed error, the workers pause, and the run completes after a restart', async () => {
      const { runs, pool, api, logger } = await start(() => ({ kind: 'created' }), {
        concurrency: 5,
        backoffMs: 200,
        // 300 payouts take 15 s or more: PostgreSQL stops well before the run could end, however busy the machine.
        rateLimit: { max: 20, durationMs: 1000 },
        // A payout whose outcome cannot be recorded holds its worker's slot this long before it fails and is parked.
        lockDurationMs: 3000,
      });
      await runs.enqueue(
        Array.from({ length: 300 }, (_, i) => payout(`s-${i}`)),
        { runId: 'outage' },
      );
      await eventually(async () => (api.requests.length >= 30 ? true : undefined), 30_000, '30 payouts sent');

      await server.stop();
      let failure: unknown;
      try {
        failure = await runs.enqueue([payout('late-1')], { runId: 'late' }).catch((error: unknown) => error);
        await eventually(
          async () =>
            logger.messages('warn').some((line) => line.includes("the account's queue pauses")) ? true : undefined,
          60_000,
          'the workers pause',
        );
      } finally {
        // Started again whatever happened, for the specs after this one.
        await server.restart();
      }
      const progress = await untilCompleted({ runs } as RunsApp, 'outage', 60_000);

      expect(failure).toBeInstanceOf(PayoutRunEnqueueError);
      expect(failure).toMatchObject({
        runId: 'late',
        reason: 'error',
        retrySafe: true,
        items: [{ index: 0, requestId: 'late-1', status: 'not-queued' }],
      });
      const cause = (failure as Error).cause;
      expect(cause).toBeInstanceOf(PayoutLedgerUnavailableError);
      expect(cause).toMatchObject({
        operation: 'record the payouts',
        reason: 'error',
        written: 'none',
        retrySafe: true,
      });
      expect((failure as Error).message).toMatch(
        /^Payout run late was not fully enqueued: The payout ledger could not record the payouts: .+; nothing was written\. Of 1 items, 0 queued, 0 maybe queued, 1 not queued, 0 refused\./,
      );
      expect((failure as Error).message).not.toContain(server.dir);
      expect(progress.counts.sent + progress.counts.refused + progress.counts.unknown).toBe(300);
      expect(progress.counts.total).toBe(300);
      const states = await statesOf(pool);
      expect((states.sent ?? 0) + (states.unknown ?? 0)).toBe(300);
      expect(Math.max(...api.processedCounts().values())).toBe(1);
      expect(api.processedCounts().size).toBeGreaterThanOrEqual(states.sent ?? 0);
      // Enqueued again once PostgreSQL is back: nothing of it had been written.
      expect(await runs.enqueue([payout('late-1')], { runId: 'late' })).toMatchObject({ queued: 1 });
    }, 120_000);

    it('records an outcome once PostgreSQL is back when it stopped while the request was out: sent, not parked', async () => {
      const { runs, pool, api, logger, results, app } = await start(() => ({ kind: 'created' }), {
        // Longer than the outage below, however busy the machine: the outcome is recorded, not left for a later attempt.
        lockDurationMs: 60_000,
      });
      const release = api.hold('o-1');
      await runs.enqueue([payout('o-1')], { runId: 'outcome-late' });
      await eventually(async () => (api.requests.length === 1 ? true : undefined), 30_000, 'the request out');

      const notRecorded = () => logger.messages('warn').filter((line) => line.includes('not yet recorded'));
      try {
        await server.stop();
        release();
        await eventually(async () => (notRecorded().length > 0 ? true : undefined), 30_000, 'the outcome waiting');
        // Away for a few tries, one a second.
        await new Promise((resolve) => setTimeout(resolve, 2500));
      } finally {
        await server.restart();
      }
      const progress = await untilCompleted({ runs, app } as RunsApp, 'outcome-late', 60_000);

      // Said once, not at every try, and once more when recorded.
      expect(notRecorded()).toHaveLength(1);
      expect(notRecorded()[0]).toMatch(
        new RegExp(
          '^Payout o-1 of run outcome-late ended sent, not yet recorded: The payout ledger could not .+; trying ' +
            'again every 1000 ms for up to lockDurationMs \\(60000 ms\\)$',
        ),
      );
      expect(logger.messages('log').filter((line) => line.includes('recorded at try'))).toEqual([
        expect.stringMatching(/^Payout o-1 of run outcome-late ended sent: recorded at try \d+$/),
      ]);
      expect(progress.counts).toMatchObject({ total: 1, sent: 1, unknown: 0 });
      expect(await statesOf(pool)).toEqual({ sent: 1 });
      expect(api.processedCounts()).toEqual(new Map([['o-1', 1]]));
      await eventually(async () => (results.sent.length === 1 ? true : undefined), 30_000, 'the sent handler');
      expect(results.sent.map((sent) => sent.requestId)).toEqual(['o-1']);
      expect(results.unknown).toEqual([]);
    }, 120_000);

    /**
     * What a worker leaves when it dies after writing the marker, and BullMQ once the job stalled too often: the job
     * fails as soon as a worker takes it, without running. The queue is paused until the test lets a worker take it.
     */
    const stalledTooOften = async (runs: RunsApp['runs'], requestId: string, runId: string) => {
      await runs.queue.pause();
      await runs.enqueue([payout(requestId)], { runId });
      expect(await runs.store.begin(requestId, runId, 'the-dead-workers-token', false)).toMatchObject({ step: 'send' });
      const client = new Redis({ host: '127.0.0.1', port: redis.port });
      try {
        const jobKey = `${runs.queue.qualifiedName}:${payoutJobId(requestId)}`;
        expect(await client.hset(jobKey, 'defa', 'job stalled more than allowable limit')).toBe(1);
      } finally {
        client.disconnect();
      }
    };
    const notParkedYet = (requestId: string, runId: string) =>
      new RegExp(
        `^Payout ${requestId} of run ${runId} stalled too often, not parked yet: The payout ledger could not .+; ` +
          'trying again every 1000 ms until the ledger answers$',
      );

    it('parks a payout whose job stalled too often once PostgreSQL is back, when it was away as the job failed', async () => {
      const { runs, api, logger, pool, results } = await start(() => ({ kind: 'created' }));
      await stalledTooOften(runs, 'st-1', 'stalled');
      const waiting = () => logger.messages('warn').filter((line) => line.includes('not parked yet'));

      try {
        await server.stop();
        await runs.queue.resume();
        await eventually(async () => (waiting().length > 0 ? true : undefined), 30_000, 'the park waiting');
      } finally {
        await server.restart();
      }
      await eventually(async () => ((await runs.listUnknown()).total === 1 ? true : undefined), 30_000, 'parked');

      expect(waiting()).toHaveLength(1);
      expect(waiting()[0]).toMatch(notParkedYet('st-1', 'stalled'));
      expect((await runs.listUnknown()).payouts).toMatchObject([{ requestId: 'st-1', error: { name: 'Interrupted' } }]);
      expect(await statesOf(pool)).toEqual({ unknown: 1 });
      expect(logger.messages('warn')).toContain(
        'Payout st-1 of run stalled stalled too often; parked as unknown, not sent again; its job runs again for its ' +
          'handlers',
      );
      expect(logger.messages('error').filter((line) => line.includes('stalled too often'))).toEqual([]);
      await eventually(async () => (results.unknown.length === 1 ? true : undefined), 30_000, 'the unknown handler');
      expect(results.unknown).toMatchObject([{ requestId: 'st-1', error: { name: 'Interrupted' } }]);
      expect(api.requests).toEqual([]);
    }, 120_000);

    it('names the job to retry when the worker shuts down before PostgreSQL is back; the retried job parks the payout', async () => {
      const first = await start(() => ({ kind: 'created' }));
      await stalledTooOften(first.runs, 'st-2', 'stalled-down');
      const waiting = () => first.logger.messages('warn').filter((line) => line.includes('not parked yet'));

      try {
        await server.stop();
        await first.runs.queue.resume();
        await eventually(async () => (waiting().length > 0 ? true : undefined), 30_000, 'the park waiting');
        apps.splice(
          apps.findIndex((started) => started.app === first.app),
          1,
        );
        await first.app.close();
      } finally {
        await server.restart();
      }
      expect(waiting()[0]).toMatch(notParkedYet('st-2', 'stalled-down'));
      expect(first.logger.messages('error').filter((line) => line.includes('stalled too often'))).toEqual([
        'Payout st-2 of run stalled-down stalled too often and could not be parked before the worker shut down: ' +
          `retry job ${payoutJobId('st-2')} from the failed set, which parks it as unknown`,
      ]);
      expect(await statesOf(first.pool)).toEqual({ sending: 1 });

      // Another instance of the app, on the same ledger and queue, once PostgreSQL is back.
      const second = await startRunsApp(first.api.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: first.runs.queue.opts.prefix!,
        rateLimit: false,
        ledger: payoutLedgerPostgres({ pool: first.pool, timeoutMs: 2000 }),
      });
      apps.push(second);
      await (await second.runs.queue.getJob(payoutJobId('st-2')))!.retry('failed');
      await eventually(
        async () => ((await second.runs.listUnknown()).total === 1 ? true : undefined),
        30_000,
        'parked',
      );

      expect((await second.runs.listUnknown()).payouts).toMatchObject([
        { requestId: 'st-2', error: { name: 'Interrupted' } },
      ]);
      expect(await statesOf(first.pool)).toEqual({ unknown: 1 });
      expect(second.logger.messages('warn')).toContain(
        'Payout st-2 of run stalled-down: its worker stopped while sending; parked as unknown, not sent again',
      );
      await eventually(async () => (second.results.unknown.length === 1 ? true : undefined), 30_000, 'its handler');
      expect(second.results.unknown).toMatchObject([{ requestId: 'st-2', error: { name: 'Interrupted' } }]);
      expect(first.api.requests).toEqual([]);
    }, 120_000);

    it('resolves a parked payout whose job Redis lost from the request the ledger kept: absent sends it once more', async () => {
      const plan: ProviderPlan = (_requestId, seenBefore) =>
        seenBefore === 0 ? { kind: 'reset' } : { kind: 'created' };
      const { runs, api, results } = await start(plan, { attempts: 1 });
      await runs.enqueue([payout('lost-absent'), payout('lost-sent')], { runId: 'jobs-lost' });
      await eventually(async () => ((await runs.listUnknown()).total === 2 ? true : undefined), 30_000, 'both parked');
      await eventually(async () => (results.unknown.length === 2 ? true : undefined), 30_000, 'the unknown handlers');

      // Redis loses every job (a restart without its data); the ledger keeps the payouts and their requests.
      await flushRedis();
      expect(await runs.resolveUnknown('lost-absent', 'absent', { by: 'ops@example.com' })).toBe('resolved');
      expect(await runs.resolveUnknown('lost-sent', 'sent', { by: 'ops@example.com' })).toBe('resolved');
      await eventually(async () => (results.sent.length === 2 ? true : undefined), 30_000, 'both sent');

      const sent = [...results.sent].sort((a, b) => a.requestId.localeCompare(b.requestId));
      expect(sent).toMatchObject([
        { requestId: 'lost-absent', attempt: 2, reply: { status: 201 }, resolution: { decision: 'absent' } },
        { requestId: 'lost-sent', attempt: 1, resolution: { decision: 'sent', by: 'ops@example.com' } },
      ]);
      expect(sent[1]!.reply).toBeUndefined();
      expect(api.requests.map((request) => request.requestId).sort()).toEqual([
        'lost-absent',
        'lost-absent',
        'lost-sent',
      ]);
      expect((await runs.progress('jobs-lost'))!.counts).toMatchObject({ sent: 2, unknown: 0 });
    }, 60_000);

    it('finishes a decision PostgreSQL gave no reply to when it is given again, whether it was written or not', async () => {
      const plan: ProviderPlan = (_requestId, seenBefore) =>
        seenBefore === 0 ? { kind: 'reset' } : { kind: 'created' };
      const started = await start(plan, { attempts: 1 });
      const { runs, api, results, pool } = started;
      const ids = ['late-written', 'late-lost'];
      await parkedRun(started, ids, 'late');
      /**
       * Decides `absent` on `id` while a transaction holds its row, so that the ledger gives up on the reply after its
       * `timeoutMs`; the statement still waits on the connection left behind. `end` ends it before the row is let go.
       */
      const decideWhileHeld = async (id: string, end: 'commits' | 'is-terminated') => {
        const holder = await pool.connect();
        try {
          await holder.query('BEGIN');
          await holder.query('SELECT 1 FROM nestjs_payouts.payouts WHERE request_id = $1 FOR UPDATE', [id]);
          const error = await runs.resolveUnknown(id, 'absent', { by: 'ops@example.com' }).then(
            (outcome) => outcome,
            (rejection: unknown) => rejection,
          );
          const [waiting] = await decisionsWaiting(pool);
          expect(waiting).toEqual(expect.any(Number));
          if (end === 'is-terminated') await pool.query('SELECT pg_terminate_backend($1)', [waiting]);
          await holder.query('COMMIT');
          return error;
        } finally {
          holder.release();
        }
      };
      const decisionOf = async (id: string) =>
        (
          await rowsOf(pool, 'SELECT state, resolution_decision FROM nestjs_payouts.payouts WHERE request_id = $1', [
            id,
          ])
        )[0];

      for (const [id, end] of [
        ['late-written', 'commits'],
        ['late-lost', 'is-terminated'],
      ] as const) {
        const error = await decideWhileHeld(id, end);
        expect(error).toBeInstanceOf(PayoutRunResolveError);
        expect(error).toMatchObject({ requestId: id, decision: 'absent', recorded: 'maybe', retrySafe: true });
        expect((error as PayoutRunResolveError).message).toBe(
          `The decision absent on payout ${id} may or may not be recorded (The payout ledger could not resolve a ` +
            'payout: no reply within timeoutMs (2000 ms); it may or may not have been written). Calling ' +
            'resolveUnknown() again with the same decision is safe: it finishes what is left, and sends nothing twice.',
        );
        expect((error as PayoutRunResolveError).cause).toBeInstanceOf(PayoutLedgerUnavailableError);
        await eventually(
          async () => ((await decisionsWaiting(pool)).length === 0 ? true : undefined),
          10_000,
          'no wait',
        );
      }
      // The statement left behind wrote the decision once the row was let go; the one terminated wrote nothing.
      await eventually(
        async () => ((await decisionOf('late-written'))!.resolution_decision === 'absent' ? true : undefined),
        10_000,
        'the decision written by the statement left behind',
      );
      expect(await decisionOf('late-written')).toEqual({ state: 'queued', resolution_decision: 'absent' });
      expect(await decisionOf('late-lost')).toEqual({ state: 'unknown', resolution_decision: null });
      expect(api.requests).toHaveLength(2);
      expect(results.sent).toEqual([]);

      for (const id of ids) expect(await runs.resolveUnknown(id, 'absent', { by: 'ops@example.com' })).toBe('resolved');
      await untilCompleted({ runs } as RunsApp, 'late');
      await eventually(async () => (results.sent.length === 2 ? true : undefined), 30_000, 'both sent');

      expect(api.requests.map((request) => request.requestId).sort()).toEqual([
        'late-lost',
        'late-lost',
        'late-written',
        'late-written',
      ]);
      expect([...results.sent].sort((a, b) => a.requestId.localeCompare(b.requestId))).toMatchObject([
        { requestId: 'late-lost', attempt: 2, resolution: { decision: 'absent', by: 'ops@example.com' } },
        { requestId: 'late-written', attempt: 2, resolution: { decision: 'absent', by: 'ops@example.com' } },
      ]);
      expect(await runs.resolveUnknown('late-written', 'absent')).toBe('not-unknown');
      expect((await runs.progress('late'))!.counts).toMatchObject({ queued: 0, sent: 2, unknown: 0, total: 2 });
    }, 60_000);

    it('drops a decision of a sweep that PostgreSQL did not write after all, and looks the payout up afresh', async () => {
      const plan: ProviderPlan = (_requestId, seenBefore) =>
        seenBefore === 0 ? { kind: 'reset' } : { kind: 'created' };
      let holdRow!: () => void;
      let letRowGo!: () => void;
      const rowHeld = new Promise<void>((resolve) => (holdRow = resolve));
      const rowLetGo = new Promise<void>((resolve) => (letRowGo = resolve));
      let lookups = 0;
      // The provider's records catch up between the two lookups: absent at first, then created. Acting on the first
      // answer once the second is known would send the payout twice.
      const lookup = async () => {
        const call = ++lookups;
        await (call === 1 ? rowHeld : rowLetGo);
        return call === 1 ? ('absent' as const) : ('created' as const);
      };
      const reconcile = { lookup, settleAfterMs: 0, sweepEveryMs: 100 };
      const { runs, api, results, pool, logger, app } = await start(plan, { attempts: 1, reconcile });
      await runs.enqueue([payout('swept-1')], { runId: 'swept' });
      await eventually(async () => (lookups === 1 ? true : undefined), 30_000, 'the first lookup');

      // A transaction holds the payout's row while the sweep decides: the ledger gives up on the reply after its
      // timeoutMs, and the statement left behind waits. It is terminated before the row is let go: nothing written.
      const holder = await pool.connect();
      try {
        await holder.query('BEGIN');
        await holder.query("SELECT 1 FROM nestjs_payouts.payouts WHERE request_id = 'swept-1' FOR UPDATE");
        holdRow();
        const unfinished = () => logger.messages('warn').filter((line) => line.includes('at each sweep'));
        await eventually(async () => (unfinished().length === 1 ? true : undefined), 15_000, 'the unfinished warning');
        expect(unfinished()).toEqual([
          'Payout swept-1 of run swept: the lookup answered absent. The decision absent on payout swept-1 may or may ' +
            'not be recorded (The payout ledger could not resolve a payout: no reply within timeoutMs (2000 ms); it ' +
            'may or may not have been written). Calling resolveUnknown() again with the same decision is safe: it ' +
            'finishes what is left, and sends nothing twice. This instance makes it at each sweep',
        ]);
        const [waiting] = await decisionsWaiting(pool);
        expect(waiting).toEqual(expect.any(Number));
        await pool.query('SELECT pg_terminate_backend($1)', [waiting]);
        await holder.query('COMMIT');
      } finally {
        holder.release();
      }
      letRowGo();
      await eventually(async () => (results.sent.length === 1 ? true : undefined), 30_000, 'resolved as sent');

      // The decision of the first sweep was found not written and dropped; the second lookup's answer decided.
      expect(lookups).toBe(2);
      expect(results.sent).toMatchObject([
        { requestId: 'swept-1', attempt: 1, resolution: { decision: 'sent', by: 'reconcile' } },
      ]);
      expect(api.requests.map((request) => request.requestId)).toEqual(['swept-1']);
      expect(
        await rowsOf(
          pool,
          "SELECT state, resolution_decision FROM nestjs_payouts.payouts WHERE request_id = 'swept-1'",
        ),
      ).toEqual([{ state: 'sent', resolution_decision: 'sent' }]);
      expect(logger.messages('log').filter((line) => line.includes('swept-1'))).toEqual([
        'Payout swept-1 of run swept resolved as sent by reconcile: "the lookup answered created"; the sent handlers run',
      ]);
      const source = app.get<string, PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs'));
      expect((await source.figures!()).reconciled).toMatchObject({ created: 1, absent: 0 });
      expect((await runs.progress('swept'))!.counts).toMatchObject({ sent: 1, unknown: 0, total: 1 });
    }, 60_000);

    it('queues the job of a decision whose job was not queued again, or lost, once no one decides again', async () => {
      const plan: ProviderPlan = (_requestId, seenBefore) =>
        seenBefore === 0 ? { kind: 'reset' } : { kind: 'created' };
      const started = await start(plan, { attempts: 1, lockDurationMs: 2000 });
      const { runs, api, results, pool } = started;
      const ids = ['stranded-absent', 'stranded-sent'];
      await parkedRun(started, ids, 'stranded');

      const decisions = () =>
        rowsOf(
          pool,
          'SELECT request_id, state, resolution_decision, awaits_job FROM nestjs_payouts.payouts ' +
            "WHERE run_id = 'stranded' ORDER BY request_id",
        );
      // Another instance decides with a Redis user that may not write the jobs: each decision is recorded, its job is
      // not queued again, and that instance stops without deciding again.
      const prefix = `ledger${prefixes}`;
      const admin = new Redis({ host: '127.0.0.1', port: redis.port });
      let logger: RunsApp['logger'];
      try {
        await userWithoutJobWrites(admin, 'decider', 'decider-pass-4c2a', prefix);
        const decider = await startRunsApp(api.baseUrl, {
          connection: { host: '127.0.0.1', port: redis.port, username: 'decider', password: 'decider-pass-4c2a' },
          prefix,
          rateLimit: false,
          worker: false,
          ledger: payoutLedgerPostgres({ pool, timeoutMs: 2000 }),
        });
        // Nest's logger is the last app's: the worker's lines go to it from now on.
        logger = decider.logger;
        try {
          await decideWithoutQueueingJobs(decider.runs, [
            ['stranded-absent', 'absent'],
            ['stranded-sent', 'sent'],
          ]);
          // Checked within lockDurationMs of the decisions, before the worker's check can find them.
          expect(await decisions()).toEqual([
            { request_id: 'stranded-absent', state: 'queued', resolution_decision: 'absent', awaits_job: false },
            { request_id: 'stranded-sent', state: 'sent', resolution_decision: 'sent', awaits_job: true },
          ]);
          expect(results.sent).toEqual([]);
          // Redis then loses the job of the payout decided sent: only the ledger's request is left to make it from.
          await (await runs.queue.getJob(payoutJobId('stranded-sent')))!.remove();
          expect(await runs.queue.getJob(payoutJobId('stranded-sent'))).toBeUndefined();
        } finally {
          await decider.app.close();
        }
      } finally {
        await admin.call('ACL', 'DELUSER', 'decider');
        admin.disconnect();
      }

      // The worker's job repair finds them decided, unchanged for lockDurationMs, with jobs that ended before.
      await eventually(async () => (results.sent.length === 2 ? true : undefined), 30_000, 'both finished');
      expect([...results.sent].sort((a, b) => a.requestId.localeCompare(b.requestId))).toMatchObject([
        { requestId: 'stranded-absent', attempt: 2, resolution: { decision: 'absent', by: 'ops@example.com' } },
        { requestId: 'stranded-sent', attempt: 1, resolution: { decision: 'sent', by: 'ops@example.com' } },
      ]);
      expect(api.requests.map((request) => request.requestId).sort()).toEqual([
        'stranded-absent',
        'stranded-absent',
        'stranded-sent',
      ]);
      expect(
        logger
          .messages('warn')
          .filter((line) => line.includes('stranded-'))
          .sort(),
      ).toEqual([finishedByTheJobCheck('stranded-absent', 'absent'), finishedByTheJobCheck('stranded-sent', 'sent')]);
      expect(
        logger
          .messages('log')
          .filter((line) => line.includes('resolved as'))
          .sort(),
      ).toEqual([
        'Payout stranded-absent of run stranded resolved as absent by "ops@example.com"; it is sent once more under ' +
          'the same request_id',
        'Payout stranded-sent of run stranded resolved as sent by "ops@example.com"; the sent handlers run',
      ]);
      // The decision sent found its job: no longer awaited.
      await eventually(
        async () => ((await decisions()).every((row) => row.awaits_job === false) ? true : undefined),
        30_000,
        'no decision awaits its job',
      );
      expect(await decisions()).toMatchObject([
        { request_id: 'stranded-absent', state: 'sent' },
        { request_id: 'stranded-sent', state: 'sent' },
      ]);
      expect((await runs.progress('stranded'))!.counts).toMatchObject({ queued: 0, sent: 2, unknown: 0, total: 2 });
      expect(results.sent).toHaveLength(2);
    }, 60_000);

    it('shuts down after shutdownTimeoutMs when Redis stops answering while the job repair checks the queue', async () => {
      const started = await start(() => ({ kind: 'created' }), { lockDurationMs: 500, shutdownTimeoutMs: 1000 });
      const { runs, api, pool, logger } = started;
      // Whether the worker's close had begun when the job check's wait ended: the two are waited for side by side.
      const atCheckWarning = workerWhenLogged(started, 'warn', 'queue jobs');
      const release = api.hold('repair-1');
      await runs.enqueue([payout('repair-1')], { runId: 'repairing' });
      // Sending for long enough that the repair's next pass checks its job.
      await eventually(
        async () => {
          const old = `SELECT 1 FROM nestjs_payouts.payouts WHERE state = 'sending' AND state_since < now() - interval '1 s'`;
          return (await pool.query(old)).rowCount === 1 ? true : undefined;
        },
        30_000,
        'the payout sending for a second',
      );

      // A pass waits for the table as it lists the unsettled payouts; once it has its page, Redis stops: its check of
      // the job waits for Redis. A pass caught at its other query (the decisions', which asks nothing of Redis) is let
      // through, and the table locked again for the next pass, which lists the unsettled payouts first.
      const holder = await pool.connect();
      let closed: unknown;
      try {
        for (let waiter: string | undefined; waiter !== 'unsettled';) {
          if (waiter !== undefined) await holder.query('COMMIT');
          await holder.query('BEGIN');
          await holder.query('LOCK TABLE nestjs_payouts.payouts IN ACCESS EXCLUSIVE MODE');
          waiter = await eventually(
            async () => {
              const waiting = await pool.query(
                `SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%state_since < now()%'`,
              );
              const query = waiting.rows[0]?.query as string | undefined;
              return query === undefined ? undefined : query.includes('request_id > $2') ? 'unsettled' : 'decisions';
            },
            30_000,
            'the repair waiting for the table',
          );
        }
        redis.hang();
        await holder.query('COMMIT');
        closed = await closeWithin30s(started);
      } finally {
        redis.resume();
        holder.release();
        release();
      }

      expect(closed).toBe('closed');
      expect(
        logger
          .messages('warn')
          .filter((line) => line.includes('shutdownTimeoutMs'))
          .sort(),
      ).toEqual([
        'Payouts still being sent after shutdownTimeoutMs (1000 ms) are left to stop with the process; another ' +
          'worker parks them as unknown once their locks expire',
        "The check of the payouts of account 'default' for queue jobs lost or not queued again did not end within " +
          'shutdownTimeoutMs (1000 ms): it is left to stop with the process; each worker checks every lockDurationMs',
      ]);
      // The worker was no longer reported: its close had begun before the job check's wait ended.
      expect(atCheckWarning.worker).toBeUndefined();
    }, 90_000);

    it('waits for the outbox relay’s batch beside the payouts being sent when Redis stops answering at shutdown', async () => {
      const started = await start(() => ({ kind: 'created' }), { shutdownTimeoutMs: 1000 });
      const { runs, pool, logger } = started;
      // Whether the worker's close had begun when the relay gave its batch up: the two are waited for side by side.
      const atRelayError = workerWhenLogged(started, 'error', 'Outbox relay');
      let closed: unknown;
      try {
        redis.hang();
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await runs.enqueue([payout('outbox-1')], { runId: 'outbox-shutdown', db: client });
          await client.query('COMMIT');
        } finally {
          client.release();
        }
        // The relay holds the committed payout's row while the queue, waiting for Redis, does not take it.
        await eventually(
          async () => {
            const free = await pool.query(
              "SELECT 1 FROM nestjs_payouts.payouts WHERE request_id = 'outbox-1' FOR UPDATE SKIP LOCKED",
            );
            return free.rowCount === 0 ? true : undefined;
          },
          30_000,
          'the relay holding the batch',
        );
        closed = await closeWithin30s(started);
      } finally {
        redis.resume();
      }

      expect(closed).toBe('closed');
      expect(logger.messages('error').filter((line) => line.includes('Outbox relay'))).toEqual([
        expect.stringMatching(/the queue did not take 1 pending payouts within 10000 ms/),
      ]);
      // The worker was no longer reported: its close had begun before the relay's batch ended.
      expect(atRelayError.worker).toBeUndefined();
      // Rolled back: still pending, for the next relay.
      expect(await statesOf(pool)).toEqual({ pending: 1 });
    }, 90_000);

    it('gives up on a parked payout once across instances: the ledger records it with the payout', async () => {
      const reconcile = { lookup: () => 'unknown' as const, settleAfterMs: 0, sweepEveryMs: 100, giveUpAfterMs: 1000 };
      const first = await start(() => ({ kind: 'failed', status: 500 }), { reconcile });
      const reconciled = async (app: RunsApp) =>
        (await app.app.get<PayoutsHealthSource>(getPayoutsHealthSourceToken('payout-runs')).figures!()).reconciled!;
      await first.runs.enqueue([payout('g-1')], { runId: 'give-up' });
      await eventually(async () => ((await reconciled(first)).givenUp === 1 ? true : undefined), 20_000, 'a give-up');
      await first.app.close();
      apps.splice(apps.indexOf(first), 1);

      const second = await startRunsApp(first.api.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: `ledger${prefixes}`,
        rateLimit: false,
        ledger: payoutLedgerPostgres({ pool: first.pool }),
        reconcile,
      });
      apps.push(second);
      await eventually(async () => ((await reconciled(second)).unknown >= 3 ? true : undefined), 20_000, 'more sweeps');

      expect(await reconciled(second)).toMatchObject({ givenUp: 0 });
      expect(second.logger.messages('error').filter((line) => line.includes('giveUpAfterMs'))).toEqual([]);
      expect(
        await rowsOf(first.pool, 'SELECT state, given_up_at IS NOT NULL AS given_up FROM nestjs_payouts.payouts'),
      ).toEqual([{ state: 'unknown', given_up: true }]);
    }, 60_000);

    it.each([
      ['postgres', true],
      ['redis', false],
    ])(
      'FLUSHALL in the middle of a run of 2,000 (%s ledger): no request_id reaches the provider twice',
      async (_name, ledger) => {
        const { runs, pool, api } = await start(
          () => ({ kind: 'created' }),
          { concurrency: 20, lockDurationMs: 1000 },
          ledger,
        );
        const items = Array.from({ length: 2000 }, (_, i) => payout(`f-${i}`));
        await runs.enqueue(items, { runId: 'flushed' });
        await eventually(async () => (api.requests.length >= 300 ? true : undefined), 30_000, '300 payouts sent');

        await flushRedis();

        if (ledger) {
          // The ledger rebuilds the lost jobs: every payout ends sent, or unknown where its mark was found.
          const progress = await untilCompleted({ runs } as RunsApp, 'flushed', 60_000);
          expect(progress.counts.sent + progress.counts.unknown).toBe(2000);
          const rows = await rowsOf(pool, 'SELECT request_id, state FROM nestjs_payouts.payouts');
          const processed = api.processedCounts();
          expect(
            rows.filter((row) => row.state === 'sent').every((row) => processed.get(String(row.request_id)) === 1),
          ).toBe(true);
          expect(rows.filter((row) => row.state !== 'sent').every((row) => row.state === 'unknown')).toBe(true);
          expect(processed.size).toBeGreaterThanOrEqual(progress.counts.sent);
        } else {
          // Redis held both the jobs and the marks: the payouts not sent yet are gone, none is sent twice.
          expect(await runs.progress('flushed')).toBeUndefined();
          expect(api.processedCounts().size).toBeLessThan(2000);
        }
        expect(api.processedCounts().size).toBeGreaterThanOrEqual(300);
        expect(Math.max(...api.processedCounts().values())).toBe(1);
      },
      120_000,
    );

    it('adds again the jobs of more payouts than a page that Redis lost, page after page, each once, sending none twice', async () => {
      // One payout a minute: the rest stay queued, so that the repair finds the same payouts without jobs at every pass,
      // and one that stopped after its first page of 500 would never add the others.
      const { runs, pool, api, logger } = await start(() => ({ kind: 'created' }), {
        lockDurationMs: 1000,
        rateLimit: { max: 1, durationMs: 60_000 },
      });
      const ids = Array.from({ length: 1002 }, (_, i) => `page-${String(i).padStart(4, '0')}`);
      expect(
        await runs.enqueue(
          ids.map((id) => payout(id)),
          { runId: 'pages' },
        ),
      ).toMatchObject({ queued: 1002, refused: 0 });
      await eventually(
        async () => ((await statesOf(pool)).sent === 1 ? true : undefined),
        30_000,
        'the first payout sent',
      );

      await flushRedis();

      // Each pass adds the jobs it finds missing, a page at a time, and says how many: 1,001 in all, none twice.
      const addedPerPage = () =>
        logger
          .messages('warn')
          .map((line) => /^(\d+) payout\(s\) of account 'default' had no queue job \(Redis lost it\)/.exec(line))
          .filter((match) => match !== null)
          .map((match) => Number(match[1]));
      await eventually(
        async () => (addedPerPage().reduce((sum, n) => sum + n, 0) >= 1001 ? true : undefined),
        30_000,
        'the lost jobs added again',
      );
      expect(addedPerPage().reduce((sum, n) => sum + n, 0)).toBe(1001);
      expect(Math.max(...addedPerPage())).toBe(500);
      expect(logger.messages('warn')).toContain(
        "1 payout(s) of account 'default' had no queue job (Redis lost it); added again from the ledger: each one " +
          'marked sending is parked as unknown, not sent again',
      );
      // Every payout not yet sent has its job back; none reached the provider twice.
      const rows = await rowsOf(pool, "SELECT request_id FROM nestjs_payouts.payouts WHERE state = 'queued'");
      expect(rows.length).toBeGreaterThanOrEqual(999);
      const jobs = await Promise.all(rows.map((row) => runs.queue.getJob(payoutJobId(String(row.request_id)))));
      expect(jobs.filter((job) => job === undefined)).toEqual([]);
      expect(Math.max(...api.processedCounts().values())).toBe(1);
    }, 90_000);

    /** `pool`, its clients running each claim's statement through `around`: a spec counts or holds the claims. */
    const claimsThrough = (pool: pg.Pool, around: (claim: () => Promise<unknown>) => Promise<unknown>) => {
      const patched = new WeakSet<pg.PoolClient>();
      return {
        connect: async () => {
          const client = await pool.connect();
          if (!patched.has(client)) {
            patched.add(client);
            const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
            client.query = (async (...args: unknown[]) => {
              const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
              // A claim's statement, not the migration that creates its function.
              if (!/^SELECT .*\.payout_claim\(/.test(text)) return query(...args);
              return around(() => query(...args));
            }) as typeof client.query;
          }
          return client;
        },
      };
    };

    it('claims one chunk at a time: transactions of a pool could lock the same rows in opposite orders', async () => {
      const { pool } = await freshDatabase(server);
      pools.push(pool);
      // Each claim's statement is held a while before it goes: a second chunk claimed meanwhile would be seen.
      const claims = { sent: 0, inFlight: 0, most: 0 };
      const counting = claimsThrough(pool, async (claim) => {
        claims.sent += 1;
        claims.most = Math.max(claims.most, ++claims.inFlight);
        try {
          await new Promise((resolve) => setTimeout(resolve, 200));
          return await claim();
        } finally {
          claims.inFlight -= 1;
        }
      });
      const { runs } = await start(
        () => ({ kind: 'created' }),
        { worker: false, ledger: payoutLedgerPostgres({ pool: counting, migrate: true, timeoutMs: 2000 }) },
        false,
      );

      const result = await runs.enqueue(
        Array.from({ length: 1500 }, (_, i) => payout(`chunk-${i}`)),
        { runId: 'chunked' },
      );

      expect(result).toMatchObject({ queued: 1500, refused: 0 });
      expect(claims).toEqual({ sent: 3, inFlight: 0, most: 1 });
      expect(await rowsOf(pool, 'SELECT count(*)::integer AS n FROM nestjs_payouts.payouts')).toEqual([{ n: 1500 }]);
    });

    it('sends a chunk once it is claimed, all but one payout, and completes the run only after the last chunk', async () => {
      const { pool } = await freshDatabase(server);
      pools.push(pool);
      // The second chunk's claim waits until the spec lets it go.
      let claims = 0;
      let letSecondGo!: () => void;
      const secondMayGo = new Promise<void>((resolve) => (letSecondGo = resolve));
      const holding = claimsThrough(pool, async (claim) => {
        if (++claims === 2) await secondMayGo;
        return claim();
      });
      const { runs, results, api } = await start(
        () => ({ kind: 'created' }),
        {
          concurrency: 20,
          // The job repair, every lockDurationMs, would add the held payout's job on a machine slow enough to take
          // longer than that to send the first chunk.
          lockDurationMs: 120_000,
          ledger: payoutLedgerPostgres({ pool: holding, migrate: true, timeoutMs: 60_000 }),
        },
        false,
      );

      const enqueued = runs.enqueue(
        Array.from({ length: 501 }, (_, i) => payout(`first-${i}`)),
        { runId: 'two-chunks' },
      );
      // What the run looked like while the second chunk's claim waited.
      let meanwhile: { progress: Awaited<ReturnType<typeof runs.progress>>; sent: string[]; completed: number };
      try {
        await eventually(async () => (results.sent.length >= 499 ? true : undefined), 60_000, '499 payouts sent');
        await eventually(
          async () => {
            const jobs = await runs.queue.getJobCounts('waiting', 'active', 'delayed');
            return jobs.waiting + jobs.active + jobs.delayed === 0 ? true : undefined;
          },
          30_000,
          'no job left to take',
        );
        meanwhile = {
          progress: await runs.progress('two-chunks'),
          sent: results.sent.map((result) => result.requestId),
          completed: results.completed.length,
        };
      } finally {
        letSecondGo();
      }

      expect(meanwhile.progress?.counts).toEqual({
        queued: 1,
        sending: 0,
        retrying: 0,
        sent: 499,
        refused: 0,
        unknown: 0,
        total: 500,
      });
      expect(meanwhile.progress?.completedAt).toBeUndefined();
      expect(meanwhile.completed).toBe(0);
      expect(meanwhile.sent).not.toContain('first-499');

      expect(await enqueued).toMatchObject({ queued: 501, refused: 0 });
      const progress = await untilCompleted({ runs } as RunsApp, 'two-chunks');
      // Each payout's handlers run once its outcome is committed: another payout's may follow the run's own.
      await eventually(
        async () => (results.completed.length === 1 && results.sent.length === 501 ? true : undefined),
        10_000,
        "the run handler and every payout's handler",
      );

      expect(progress.counts).toEqual({
        queued: 0,
        sending: 0,
        retrying: 0,
        sent: 501,
        refused: 0,
        unknown: 0,
        total: 501,
      });
      expect(results.completed).toEqual([{ account: 'default', runId: 'two-chunks', counts: progress.counts }]);
      expect(results.sent.map((result) => result.requestId).sort()).toEqual(
        Array.from({ length: 501 }, (_, i) => `first-${i}`).sort(),
      );
      expect(api.requests).toHaveLength(501);
      expect(claims).toBe(2);
    }, 120_000);
  });
});
