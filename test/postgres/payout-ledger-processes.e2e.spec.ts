import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { NodeServerProcess } from '../node-server-process.js';
import { payout, type RunsApp, startRunsApp } from '../payout-runs/payout-runs-test-app.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { freshDatabase, rowsOf } from './payout-ledger-test-support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APP = fileURLToPath(new URL('../payout-runs/payout-runs-worker-app.mjs', import.meta.url));
const PAYOUTS = 2000;
const idAt = (index: number) => `kp-${String(index).padStart(5, '0')}`;

describeWithPostgres('the PostgreSQL ledger when Redis and a worker are killed (real processes)', () => {
  describeWithRedis('a run of 2,000 over two worker processes', () => {
    let server: PostgresServer;
    let redis: RedisServer;
    let provider: MockPayoutsProvider;
    let pool: pg.Pool;
    let url: string;
    let web: RunsApp | undefined;
    const workers: NodeServerProcess[] = [];

    beforeAll(async () => {
      // Redis as in production: an append-only file written to disk once a second, so a kill -9 loses up to a second.
      [server, redis] = await Promise.all([
        PostgresServer.start(),
        RedisServer.start({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] }),
      ]);
      ({ pool, url } = await freshDatabase(server));
      provider = await MockPayoutsProvider.start(() => ({ kind: 'created' }), { minLatencyMs: 5, maxLatencyMs: 20 });
    }, 60_000);
    afterAll(async () => {
      await pool?.end();
      await provider?.close();
      await Promise.all([server?.close(), redis?.close()]);
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((worker) => worker.kill()));
      await web?.app.close();
    });

    const startWorker = async () => {
      const args = [
        APP,
        `--base-url=${provider.baseUrl}`,
        '--prefix=killed',
        `--redis-port=${redis.port}`,
        `--database-url=${url}`,
        '--max=250',
        '--concurrency=10',
        '--lock-ms=2000',
      ];
      const started = await NodeServerProcess.start(args, { cwd: ROOT, ready: /^ready$/, timeoutMs: 30_000 });
      workers.push(started.process);
      return started.process;
    };

    it('sends no request_id twice when Redis is killed -9 and restarted and a worker is killed, and ends every payout', async () => {
      web = await startRunsApp(provider.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        prefix: 'killed',
        rateLimit: { max: 250, durationMs: 1000 },
        worker: false,
        ledger: payoutLedgerPostgres({ pool, migrate: true }),
      });
      const [killed] = await Promise.all([startWorker(), startWorker()]);
      const enqueued = await web.runs.enqueue(
        Array.from({ length: PAYOUTS }, (_, index) => payout(idAt(index))),
        { runId: 'killed' },
      );
      expect(enqueued).toMatchObject({ queued: PAYOUTS, refused: 0 });

      await eventually(async () => (provider.requests.length >= PAYOUTS * 0.2 ? true : undefined), 60_000, '20% sent');
      await killed!.kill();
      await eventually(async () => (provider.requests.length >= PAYOUTS * 0.4 ? true : undefined), 60_000, '40% sent');
      await redis.stop();
      await redis.restart();
      const progress = await eventually(
        async () => {
          const current = await web!.runs.progress('killed').catch(() => undefined);
          return current?.completedAt ? current : undefined;
        },
        120_000,
        'the run completes',
      );

      const processed = provider.processedCounts();
      expect([...processed.values()].filter((count) => count > 1)).toEqual([]);
      expect(progress.counts).toMatchObject({ queued: 0, sending: 0, retrying: 0, refused: 0, total: PAYOUTS });
      expect(progress.counts.sent + progress.counts.unknown).toBe(PAYOUTS);
      const rows = await rowsOf(pool, 'SELECT request_id, state FROM nestjs_payouts.payouts');
      expect(rows).toHaveLength(PAYOUTS);
      // Every payout sent reached the provider once; every one parked as unknown was begun by a worker that stopped.
      expect(
        rows.filter((row) => row.state === 'sent').every((row) => processed.get(String(row.request_id)) === 1),
      ).toBe(true);
      expect(processed.size).toBeGreaterThanOrEqual(progress.counts.sent);
    }, 240_000);
  });
});
