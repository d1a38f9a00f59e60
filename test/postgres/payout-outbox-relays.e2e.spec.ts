import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { NodeServerProcess } from '../node-server-process.js';
import { payout, type RunsApp, startRunsApp } from '../payout-runs/payout-runs-test-app.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';
import { RedisServer } from '../support/redis-server.js';
import { describeWithRedis } from '../support/redis-suite.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APP = fileURLToPath(new URL('./payout-outbox-relay-app.mjs', import.meta.url));
const PREFIX = 'relays';

describeWithPostgres('outbox relays in several processes', () => {
  describeWithRedis('with Redis', () => {
    let postgres: PostgresServer;
    let redis: RedisServer;
    let provider: MockPayoutsProvider;
    let pool: pg.Pool;
    let databaseUrl: string;
    let web: RunsApp;
    let admin: Redis;
    const relays: NodeServerProcess[] = [];

    beforeAll(async () => {
      [postgres, redis, provider] = await Promise.all([
        PostgresServer.start(),
        RedisServer.start(),
        MockPayoutsProvider.start(undefined, { minLatencyMs: 1, maxLatencyMs: 5 }),
      ]);
      const database = await postgres.createDatabase('merchant');
      databaseUrl = postgres.url(database);
      pool = new pg.Pool({ ...postgres.connection(database), max: 20 });
      pool.on('error', () => undefined);
      // An instance that only enqueues (no worker, so no relay): the relays run in the processes.
      web = await startRunsApp(provider.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: PREFIX,
        rateLimit: false,
        worker: false,
        ledger: payoutLedgerPostgres({ pool, migrate: true }),
      });
      admin = new Redis({ host: '127.0.0.1', port: redis.port });
    }, 60_000);
    afterEach(async () => {
      await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    });
    afterAll(async () => {
      await Promise.all(relays.splice(0).map((relay) => relay.kill()));
      await web?.app.close();
      admin?.disconnect();
      await pool?.end();
      await provider?.close();
      await redis?.close();
      await postgres?.close();
    });

    const startRelay = async (name: string) => {
      const args = [
        APP,
        `--base-url=${provider.baseUrl}`,
        `--prefix=${PREFIX}`,
        `--redis-port=${redis.port}`,
        `--database-url=${databaseUrl}`,
        `--name=${name}`,
      ];
      const started = await NodeServerProcess.start(args, { cwd: ROOT, ready: /^ready$/, timeoutMs: 20_000 });
      relays.push(started.process);
      return started.process;
    };
    /** Commits `count` payouts in transactions of 100, as an app's requests would. */
    const commitPayouts = async (prefix: string, runId: string, count: number) => {
      for (let start = 0; start < count; start += 100) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const items = Array.from({ length: 100 }, (_, offset) => payout(`${prefix}-${start + offset}`));
          const result = await web.runs.enqueue(items, { runId, db: client });
          expect(result.pending).toBe(100);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }
    };
    /** The relays holding a batch: their transaction is open, waiting for the queue to take the batch. */
    const holdingABatch = async () => {
      const { rows } = await pool.query<{ name: string }>(
        "SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE state = 'idle in transaction' " +
          "AND application_name LIKE 'relay-%' ORDER BY 1",
      );
      return rows.map((row) => row.name);
    };
    const states = async (runId: string) => {
      const { rows } = await pool.query<{ state: string; n: number }>(
        'SELECT state, count(*)::integer AS n FROM nestjs_payouts.payouts WHERE run_id = $1 GROUP BY state',
        [runId],
      );
      return Object.fromEntries(rows.map(({ state, n }) => [state, n]));
    };
    const processed = (prefix: string) =>
      [...provider.processedCounts()].filter(([requestId]) => requestId.startsWith(`${prefix}-`));

    it('moves every committed payout when a relay is killed with kill -9 holding a batch, each sent once', async () => {
      const [killed] = await Promise.all([startRelay('relay-1'), startRelay('relay-2')]);
      // Redis takes no write until told: each relay's batch waits for the queue, its transaction open.
      await admin.call('CLIENT', 'PAUSE', '60000', 'WRITE');
      await commitPayouts('killed', 'killed', 1200);
      const holding = await eventually(
        async () => ((await holdingABatch()).length === 2 ? holdingABatch() : undefined),
        30_000,
        'both relays hold a batch at once',
      );
      expect(holding).toEqual(['relay-1', 'relay-2']);

      await killed!.kill();
      await admin.call('CLIENT', 'UNPAUSE');

      await eventually(
        async () => ((await states('killed')).sent === 1200 ? true : undefined),
        90_000,
        'all 1,200 sent',
      );
      const counts = processed('killed');
      expect(counts).toHaveLength(1200);
      expect(counts.filter(([, count]) => count > 1)).toEqual([]);
    }, 180_000);

    it('shares the work between two relays started at once over a backlog: every payout queued and sent once', async () => {
      // The backlog is committed while no relay runs; then two start together.
      await Promise.all(relays.splice(0).map((relay) => relay.kill()));
      await commitPayouts('backlog', 'backlog', 1200);
      expect(await states('backlog')).toEqual({ pending: 1200 });
      const started = await Promise.all([startRelay('relay-3'), startRelay('relay-4')]);

      await eventually(
        async () => ((await states('backlog')).sent === 1200 ? true : undefined),
        90_000,
        'all 1,200 sent',
      );
      const counts = processed('backlog');
      expect(counts).toHaveLength(1200);
      expect(counts.filter(([, count]) => count > 1)).toEqual([]);
      expect(started.flatMap((relay) => relay.linesMatching(/^error /))).toEqual([]);
    }, 180_000);
  });
});
