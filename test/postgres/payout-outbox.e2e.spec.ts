import { Queue } from 'bullmq';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { PayoutLedgerUnavailableError, PayoutsCallOptionsError, type PayoutLedgerTransaction } from 'nestjs-payouts';
import { payoutJobId, payoutRunsQueueName } from 'nestjs-payouts/payout-runs';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { payout, type RunsApp, startRunsApp } from '../payout-runs/payout-runs-test-app.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';
import { RedisServer } from '../support/redis-server.js';
import { describeWithRedis } from '../support/redis-suite.js';

/** Knex's `?` placeholders in place of the ledger's `$n`, each used once and in order: the adapter of the docs. */
const knexTransaction = (trx: Knex.Transaction): PayoutLedgerTransaction => ({
  query: (text, values) => trx.raw(text.replace(/\$\d+/g, '?'), values as Knex.RawBinding[]),
});

describeWithPostgres('payouts enqueued in the caller’s PostgreSQL transaction (the outbox)', () => {
  describeWithRedis('with Redis', () => {
    let postgres: PostgresServer;
    let redis: RedisServer;
    let provider: MockPayoutsProvider;
    let pool: pg.Pool;
    let app: RunsApp;
    let queue: Queue;
    let knex: Knex;

    beforeAll(async () => {
      [postgres, redis, provider] = await Promise.all([
        PostgresServer.start(),
        RedisServer.start(),
        MockPayoutsProvider.start(undefined, { minLatencyMs: 1, maxLatencyMs: 5 }),
      ]);
      const database = await postgres.createDatabase('merchant');
      pool = new pg.Pool({ ...postgres.connection(database), max: 40 });
      pool.on('error', () => undefined);
      await pool.query('CREATE TABLE orders (id text PRIMARY KEY, paid_out boolean NOT NULL DEFAULT true)');
      app = await startRunsApp(provider.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: 'outbox',
        rateLimit: false,
        concurrency: 20,
        attempts: 3,
        backoffMs: 20,
        ledger: payoutLedgerPostgres({ pool, migrate: true }),
      });
      queue = new Queue(payoutRunsQueueName(), {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: 'outbox',
      });
      knex = knexFactory({ client: 'pg', connection: postgres.url(database), pool: { min: 0, max: 5 } });
    }, 60_000);
    afterAll(async () => {
      await app?.app.close();
      await queue?.close();
      await knex?.destroy();
      await pool?.end();
      await provider?.close();
      await redis?.close();
      await postgres?.close();
    });

    /** The states of the ledger's rows of a run, counted. */
    const states = async (runId: string) => {
      const { rows } = await pool.query<{ state: string; n: number }>(
        'SELECT state, count(*)::integer AS n FROM nestjs_payouts.payouts WHERE run_id = $1 GROUP BY state',
        [runId],
      );
      return Object.fromEntries(rows.map(({ state, n }) => [state, n]));
    };
    /** How many requests the provider processed per request_id, for the ids starting with `prefix`. */
    const processed = (prefix: string) =>
      new Map([...provider.processedCounts()].filter(([requestId]) => requestId.startsWith(prefix)));
    const untilSent = (runId: string, count: number) =>
      eventually(async () => ((await states(runId)).sent === count ? true : undefined), 60_000, `${count} sent`);

    /** One business transaction with pg: the order row and its payout, committed or rolled back. */
    const order = async (id: string, runId: string, commit: boolean) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO orders (id) VALUES ($1)', [id]);
        const result = await app.runs.enqueue([payout(id)], { runId, db: client });
        await client.query(commit ? 'COMMIT' : 'ROLLBACK');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    };

    it('sends exactly the 700 payouts of 1,000 transactions that committed, each once, none of the 300 rolled back', async () => {
      const ids = Array.from({ length: 1000 }, (_, index) => `tx-${String(index).padStart(4, '0')}`);
      const committed = new Set(ids.filter((_, index) => index % 10 >= 3));
      const results: Awaited<ReturnType<typeof order>>[] = [];
      // Ten transactions at a time, as an app's requests would run them.
      for (let start = 0; start < ids.length; start += 10) {
        results.push(
          ...(await Promise.all(ids.slice(start, start + 10).map((id) => order(id, 'thousand', committed.has(id))))),
        );
      }

      expect(results.every((result) => result.pending === 1 && result.items[0]!.status === 'pending')).toBe(true);
      await untilSent('thousand', 700);
      const counts = processed('tx-');
      expect(new Set(counts.keys())).toEqual(committed);
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
      expect(await states('thousand')).toEqual({ sent: 700 });
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(*)::integer AS n FROM orders WHERE id LIKE 'tx-%'",
      );
      expect(rows[0]!.n).toBe(700);
      // A payout's handlers run once its outcome is committed, so the last of them may still be on their way.
      const handled = () => app.results.sent.filter((result) => result.runId === 'thousand').map((r) => r.requestId);
      await eventually(async () => (handled().length >= 700 ? true : undefined), 30_000, 'the sent handlers');
      expect(handled().length).toBe(700);
      expect(new Set(handled())).toEqual(committed);
    }, 180_000);

    it('queues nothing before the commit: the payout is a row of the open transaction only', async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await app.runs.enqueue([payout('open-1'), payout('open-2')], { runId: 'open', db: client });
        expect(result).toMatchObject({ runId: 'open', pending: 2, queued: 0, alreadyQueued: 0, refused: 0 });
        const outside = await pool.query("SELECT 1 FROM nestjs_payouts.payouts WHERE request_id LIKE 'open-%'");
        expect(outside.rows).toEqual([]);
        expect(await queue.getJob(payoutJobId('open-1'))).toBeUndefined();
        // Enqueued again in the same transaction: already there, nothing more written.
        const again = await app.runs.enqueue([payout('open-1')], { runId: 'open', db: client });
        expect(again).toMatchObject({ pending: 0, alreadyQueued: 1 });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      await untilSent('open', 2);
      expect(await queue.getJob(payoutJobId('open-1'))).toBeDefined();
      expect(processed('open-')).toEqual(
        new Map([
          ['open-1', 1],
          ['open-2', 1],
        ]),
      );
    });

    it('refuses an invalid item or a request_id used for another body alone, and writes the rest', async () => {
      await order('body-1', 'bodies', true);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const invalid = { ...payout('body-2'), amount: { value: 'ten', currency_code: 'KES' } };
        const result = await app.runs.enqueue([payout('body-1', '99.00'), invalid, payout('body-3')], {
          runId: 'bodies',
          db: client,
        });
        expect(result.items.map((item) => item.status)).toEqual(['refused', 'refused', 'pending']);
        expect(result.items[0]).toMatchObject({ error: { name: 'PayoutRequestConflictError' } });
        expect(result.items[1]).toMatchObject({ error: { name: 'PayoutValidationError' } });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      await untilSent('bodies', 2);
      expect([...processed('body-').keys()].sort()).toEqual(['body-1', 'body-3']);
    });

    it('works through Knex with the one-line adapter: the committed transactions’ payouts are sent, not the others', async () => {
      const committed: string[] = [];
      for (let index = 0; index < 20; index++) {
        const ids = [`knex-${index}-a`, `knex-${index}-b`];
        const commit = index % 4 !== 0;
        await knex
          .transaction(async (trx) => {
            await trx('orders').insert(ids.map((id) => ({ id })));
            const result = await app.runs.enqueue(
              ids.map((id) => payout(id)),
              { runId: 'knex', db: knexTransaction(trx) },
            );
            expect(result.pending).toBe(2);
            if (!commit) throw new Error('the order was cancelled');
          })
          .catch((error: Error) => expect(error.message).toBe('the order was cancelled'));
        if (commit) committed.push(...ids);
      }

      await untilSent('knex', 30);
      expect([...processed('knex-').keys()].sort()).toEqual(committed.sort());
      expect([...processed('knex-').values()].every((count) => count === 1)).toBe(true);
    }, 60_000);

    it('takes a transaction whose query resolves with the rows themselves, as TypeORM’s QueryRunner does', async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const db: PayoutLedgerTransaction = { query: async (text, values) => (await client.query(text, values)).rows };
        const result = await app.runs.enqueue([payout('rows-1'), payout('rows-2')], { runId: 'rows', db });
        expect(result).toMatchObject({ pending: 2, refused: 0 });
        const again = await app.runs.enqueue([payout('rows-1')], { runId: 'rows', db });
        expect(again).toMatchObject({ pending: 0, alreadyQueued: 1 });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      await untilSent('rows', 2);
      expect([...processed('rows-').keys()].sort()).toEqual(['rows-1', 'rows-2']);
    });

    it('rejects within the ledger’s timeoutMs with PayoutLedgerUnavailableError while another transaction holds the request_id', async () => {
      const [holder, waiter] = [await pool.connect(), await pool.connect()];
      try {
        await holder.query('BEGIN');
        await app.runs.enqueue([payout('held-1')], { runId: 'held', db: holder });
        await waiter.query('BEGIN');
        const refused = await app.runs
          .enqueue([payout('held-1')], { runId: 'held', db: waiter })
          .catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(PayoutLedgerUnavailableError);
        expect(refused).toMatchObject({ reason: 'timeout', written: 'unknown', retrySafe: true });
        expect((refused as Error).message).toContain('roll the transaction back');
        await holder.query('ROLLBACK');
        await waiter.query('ROLLBACK');
      } finally {
        holder.release();
        waiter.release();
      }
      expect(await states('held')).toEqual({});
    }, 60_000);

    it('notifies its relays under a schema whose name is as long as PostgreSQL allows (63 characters)', async () => {
      const schema = `outbox_${'s'.repeat(56)}`;
      const longNamed = await startRunsApp(provider.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: 'outbox-long-schema',
        rateLimit: false,
        ledger: payoutLedgerPostgres({ pool, schema, migrate: true }),
      });
      try {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const result = await longNamed.runs.enqueue([payout('long-1')], { runId: 'long', db: client });
          expect(result.pending).toBe(1);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
        await eventually(async () => (longNamed.results.sent.length === 1 ? true : undefined), 30_000, 'sent');
        expect(longNamed.results.sent.map((sent) => sent.requestId)).toEqual(['long-1']);
      } finally {
        await longNamed.app.close();
      }
    });

    it('keeps committed payouts pending while Redis is down, and moves them when it is back', async () => {
      await redis.stop();
      for (let index = 0; index < 10; index++) await order(`redis-down-${index}`, 'redis-down', true);
      expect(await states('redis-down')).toEqual({ pending: 10 });
      await redis.restart();

      await untilSent('redis-down', 10);
      expect([...processed('redis-down-').values()]).toEqual(Array.from({ length: 10 }, () => 1));
    });

    it('rolls a batch back to pending when the queue does not take it in time, and sends each payout once when Redis is back', async () => {
      // An app of its own (its own schema and relay), so that its relay's first failure is logged at once.
      const schema = 'outbox_redis_away';
      const away = await startRunsApp(provider.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: 'outbox-redis-away',
        rateLimit: false,
        concurrency: 5,
        ledger: payoutLedgerPostgres({ pool, schema, migrate: true }),
      });
      const awayStates = async () => {
        const { rows } = await pool.query<{ state: string; n: number }>(
          `SELECT state, count(*)::integer AS n FROM ${schema}.payouts GROUP BY state`,
        );
        return Object.fromEntries(rows.map(({ state, n }) => [state, n]));
      };
      const relayErrors = () => away.logger.lines.filter((line) => line.startsWith('error: Outbox relay'));
      try {
        await redis.stop();
        for (let index = 0; index < 10; index++) {
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            await away.runs.enqueue([payout(`redis-away-${index}`)], { runId: 'redis-away', db: client });
            await client.query('COMMIT');
          } finally {
            client.release();
          }
        }
        // The relay held a batch, handed it to the queue, gave up on it and rolled its transaction back: the rows are
        // pending again, for its next try. The queue's commands buffered meanwhile may still reach Redis once it is back.
        await eventually(async () => (relayErrors().length > 0 ? true : undefined), 40_000, 'the relay giving up');
        expect(relayErrors()[0]).toMatch(/the queue did not take \d+ pending payouts within 10000 ms/);
        expect(await awayStates()).toEqual({ pending: 10 });
        await redis.restart();

        // The sent handler runs once the outcome is recorded: the last of the ten is the last thing to happen.
        await eventually(async () => (away.results.sent.length === 10 ? true : undefined), 60_000, '10 sent');
        expect(away.results.sent.map((sent) => sent.requestId).sort()).toEqual(
          Array.from({ length: 10 }, (_, index) => `redis-away-${index}`).sort(),
        );
        expect(await awayStates()).toEqual({ sent: 10 });
        expect([...processed('redis-away-').values()]).toEqual(Array.from({ length: 10 }, () => 1));
      } finally {
        if (redis.pid === undefined) await redis.restart();
        await away.app.close();
      }
    }, 120_000);

    it('moves the payouts committed after a PostgreSQL restart, its listening connection lost meanwhile', async () => {
      await postgres.stop();
      await postgres.restart();
      for (let index = 0; index < 10; index++) await order(`pg-back-${index}`, 'pg-back', true);

      await untilSent('pg-back', 10);
      expect([...processed('pg-back-').values()]).toEqual(Array.from({ length: 10 }, () => 1));
    });
  });

  describeWithRedis('without the Postgres ledger', () => {
    let redis: RedisServer;
    let app: RunsApp | undefined;

    beforeAll(async () => {
      redis = await RedisServer.start();
    });
    afterEach(async () => {
      await app?.app.close();
    });
    afterAll(async () => {
      await redis?.close();
    });

    it('refuses db with an error naming it, and queues nothing', async () => {
      app = await startRunsApp('http://127.0.0.1:9/v1', {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: 'no-ledger',
        rateLimit: false,
        worker: false,
      });
      const db = { query: async () => ({ rows: [] }) };
      const refused = await app.runs.enqueue([payout('no-ledger-1')], { db }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PayoutsCallOptionsError);
      expect(refused).toMatchObject({ option: 'db' });
      expect((refused as Error).message).toContain('payoutLedgerPostgres');
      const malformed = await app.runs
        .enqueue([payout('no-ledger-1')], { db: {} as PayoutLedgerTransaction })
        .catch((error: unknown) => error);
      expect(malformed).toMatchObject({ option: 'db' });
      expect(await app.runs.queue.getJob(payoutJobId('no-ledger-1'))).toBeUndefined();
    });
  });
});
