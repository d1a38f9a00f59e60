import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { runCli } from '../cli/run-cli.js';
import { payout, type RunsApp, startRunsApp } from '../payout-runs/payout-runs-test-app.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { freshDatabase, rowsOf } from './payout-ledger-test-support.js';

const PASSWORD = 'ledger-cli-db-password-9f2a';

describeWithPostgres('nestjs-payouts payout-runs --ledger postgres (real processes)', () => {
  describeWithRedis('against the ledger of a running app', () => {
    let server: PostgresServer;
    let redis: RedisServer;
    let provider: MockPayoutsProvider;
    let app: RunsApp;
    let pool: pg.Pool;
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      [server, redis] = await Promise.all([PostgresServer.start(), RedisServer.start()]);
      const database = await freshDatabase(server);
      pool = database.pool;
      // Trust authentication ignores the password; the URL carries it, and nothing may print it.
      env = {
        DATABASE_URL: database.url.replace('postgresql://postgres@', `postgresql://postgres:${PASSWORD}@`),
        REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      };
      provider = await MockPayoutsProvider.start((requestId) =>
        requestId === 'cli-unknown' ? { kind: 'failed', status: 502 } : { kind: 'created' },
      );
      app = await startRunsApp(provider.baseUrl, {
        connection: { host: '127.0.0.1', port: redis.port },
        rateLimit: false,
        ledger: payoutLedgerPostgres({ pool, migrate: true }),
      });
      await app.runs.enqueue([payout('cli-ok'), payout('cli-unknown')], { runId: 'cli-run' });
      await eventually(
        async () => ((await app.runs.progress('cli-run'))?.completedAt ? true : undefined),
        15_000,
        'the run completes',
      );
    }, 60_000);
    afterAll(async () => {
      await app?.app.close();
      await pool?.end();
      await provider?.close();
      await Promise.all([server?.close(), redis?.close()]);
    });

    it('shows a run, lists the unknown payouts and resolves one from the ledger', async () => {
      const progress = await runCli(
        ['payout-runs', 'progress', '--run', 'cli-run', '--ledger', 'postgres'],
        20_000,
        env,
      );
      const unknown = await runCli(['payout-runs', 'unknown', '--ledger', 'postgres'], 20_000, env);
      const resolved = await runCli(
        [
          'payout-runs',
          'resolve',
          '--request-id',
          'cli-unknown',
          '--as',
          'absent',
          '--by',
          'ops',
          '--ledger',
          'postgres',
        ],
        20_000,
        env,
      );

      expect(progress).toMatchObject({ code: 0, stderr: '' });
      expect(progress.stdout).toMatch(/^Run cli-run: 2 payouts, completed \S+Z\n/);
      expect(progress.stdout).toContain('  sent      1\n');
      expect(progress.stdout).toContain('  unknown   1\n');
      expect(unknown).toMatchObject({ code: 0, stderr: '' });
      expect(unknown.stdout).toContain('1 payout of unknown outcome in the payout runs of the unnamed account');
      expect(unknown.stdout).toContain('cli-unknown  run cli-run  1 request  since ');
      expect(resolved).toMatchObject({ code: 0, stderr: '' });
      expect(resolved.stdout).toContain('Resolved payout cli-unknown of the payout runs');
      await eventually(
        async () => (provider.processedCounts().get('cli-unknown') === 2 ? true : undefined),
        15_000,
        'the payout resolved absent is sent once more',
      );
      expect(
        await rowsOf(pool, "SELECT resolved_by FROM nestjs_payouts.payouts WHERE request_id = 'cli-unknown'"),
      ).toEqual([{ resolved_by: 'ops' }]);
      expect([progress, unknown, resolved].map((run) => run.stdout + run.stderr).join('')).not.toContain(PASSWORD);
    }, 90_000);

    it('exits 2 naming the option or the missing schema, never printing the password', async () => {
      const runs = await Promise.all([
        runCli(['payout-runs', 'unknown', '--ledger', 'mysql'], 20_000, env),
        runCli(['payout-runs', 'unknown', '--schema', 'other'], 20_000, env),
        runCli(['payout-runs', 'unknown', '--ledger', 'postgres', '--schema', 'other_ledger'], 20_000, env),
      ]);

      expect(runs.map((run) => run.code)).toEqual([2, 2, 2]);
      expect(runs[0]!.stderr).toContain('Error: --ledger must be redis or postgres');
      expect(runs[1]!.stderr).toContain('Error: --database-url and --schema go with --ledger postgres');
      expect(runs[2]!.stderr).toContain(
        'Error: The payout ledger\'s schema "other_ledger" does not exist: run "npx nestjs-payouts postgres migrate',
      );
      expect(runs.map((run) => run.stdout + run.stderr).join('')).not.toContain(PASSWORD);
    }, 60_000);
  });
});
