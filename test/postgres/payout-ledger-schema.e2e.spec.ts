import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { PayoutLedgerSchemaError } from 'nestjs-payouts';
import { payoutLedgerPostgres, PAYOUT_LEDGER_SCHEMA_VERSION } from 'nestjs-payouts/postgres';
import { runCli } from '../cli/run-cli.js';
import { eventually } from '../support/eventually.js';
import { type RunsApp, startRunsApp } from '../payout-runs/payout-runs-test-app.js';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { freshDatabase, rowsOf } from './payout-ledger-test-support.js';

const PASSWORD = 'ledger-db-password-5c1e';
/** With trust authentication PostgreSQL ignores the password: the URL still carries it, and nothing may echo it. */
const withPassword = (url: string) => url.replace('postgresql://postgres@', `postgresql://postgres:${PASSWORD}@`);

describeWithPostgres('the payout ledger schema (a real PostgreSQL)', () => {
  describeWithRedis('migrated by command or option, refused at boot when missing or newer', () => {
    let server: PostgresServer;
    let redis: RedisServer;
    const pools: pg.Pool[] = [];
    const apps: RunsApp[] = [];

    beforeAll(async () => {
      [server, redis] = await Promise.all([PostgresServer.start(), RedisServer.start()]);
    }, 60_000);
    afterAll(async () => {
      await Promise.all([server?.close(), redis?.close()]);
    }, 60_000);
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((started) => started.app.close()));
      await Promise.all(pools.splice(0).map((pool) => pool.end()));
    }, 60_000);

    const database = async () => {
      const fresh = await freshDatabase(server);
      pools.push(fresh.pool);
      return fresh;
    };
    const tables = async (pool: pg.Pool, schema = 'nestjs_payouts') =>
      (
        await rowsOf(pool, 'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [
          schema,
        ])
      ).map((row) => row.table_name);
    const boot = (pool: pg.Pool, extra: object = {}) =>
      startRunsApp('http://127.0.0.1:9/v1', {
        connection: { host: '127.0.0.1', port: redis.port },
        rateLimit: false,
        worker: false,
        ledger: payoutLedgerPostgres({ pool, ...extra }),
      }).then((started) => {
        apps.push(started);
        return started;
      });

    it('creates the tables with "postgres migrate" from DATABASE_URL, never echoing the password, and does nothing the second time', async () => {
      const { url, pool } = await database();

      const first = await runCli(['postgres', 'migrate'], 30_000, { DATABASE_URL: withPassword(url) });
      const second = await runCli(['postgres', 'migrate', '--database-url', withPassword(url)], 30_000);

      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(first.stdout).toMatch(
        /^Migrated the payout ledger's schema nestjs_payouts of database ledger_\d+_\d+ on .+ from version 0 to 1\.\n$/,
      );
      expect(second).toMatchObject({ code: 0, stderr: '' });
      expect(second.stdout).toContain('schema nestjs_payouts of database ledger_');
      expect(second.stdout).toContain('is at version 1: nothing to do.');
      expect(first.stdout + second.stdout).not.toContain(PASSWORD);
      expect(await tables(pool)).toEqual(['payout_runs', 'payouts', 'schema_version', 'sweep_locks']);
      expect(await rowsOf(pool, 'SELECT version FROM nestjs_payouts.schema_version')).toEqual([{ version: 1 }]);
    }, 60_000);

    it('applies the migrations once when two processes run the command at once', async () => {
      const { url, pool } = await database();

      const runs = await Promise.all(
        [1, 2, 3].map(() =>
          runCli(['postgres', 'migrate', '--schema', 'payouts_ledger'], 30_000, { DATABASE_URL: url }),
        ),
      );

      expect(runs.map((run) => run.code)).toEqual([0, 0, 0]);
      expect(runs.filter((run) => run.stdout.includes('from version 0 to 1'))).toHaveLength(1);
      expect(runs.filter((run) => run.stdout.includes('nothing to do'))).toHaveLength(2);
      expect(await rowsOf(pool, 'SELECT version FROM payouts_ledger.schema_version')).toEqual([{ version: 1 }]);
    }, 60_000);

    it.each([
      [[], {}, '--database-url is required (or the DATABASE_URL environment variable)'],
      [
        ['--database-url', `redis://:${PASSWORD}@127.0.0.1:6379`],
        {},
        '--database-url must be a postgresql:// or postgres:// URL',
      ],
      [
        ['--schema', 'Payouts; DROP'],
        { DATABASE_URL: 'postgresql://127.0.0.1/x' },
        '--schema must be a lower-case name',
      ],
      [
        ['--timeout-ms', 'soon'],
        { DATABASE_URL: 'postgresql://127.0.0.1/x' },
        '--timeout-ms must be a positive whole number of milliseconds',
      ],
    ])(
      'exits 2 naming the option for %j',
      async (args, env, problem) => {
        const run = await runCli(['postgres', 'migrate', ...args], 15_000, { DATABASE_URL: '', ...env });

        expect(run.code).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toContain(`Error: ${problem}`);
        expect(run.stderr).not.toContain(PASSWORD);
      },
      60_000,
    );

    it('exits 2 without the password when PostgreSQL cannot be reached', async () => {
      const url = `postgresql://postgres:${PASSWORD}@${encodeURIComponent(server.dir)}-gone:5432/nowhere`;

      const run = await runCli(['postgres', 'migrate', '--timeout-ms', '5000'], 15_000, { DATABASE_URL: url });

      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /^Error: cannot migrate the payout ledger's schema nestjs_payouts of database nowhere on .+-gone:5432 \(.+\)\.\n$/,
      );
      expect(run.stderr).not.toContain(PASSWORD);
    }, 60_000);

    it('migrates at boot with migrate: true, two apps at once', async () => {
      const { pool } = await database();

      const [one] = await Promise.all([boot(pool, { migrate: true }), boot(pool, { migrate: true })]);

      expect(await tables(pool)).toEqual(['payout_runs', 'payouts', 'schema_version', 'sweep_locks']);
      expect(await rowsOf(pool, 'SELECT version FROM nestjs_payouts.schema_version')).toEqual([{ version: 1 }]);
      expect(await one.runs.progress('none')).toBeUndefined();
    }, 60_000);

    it('prunes with retentionDays the payouts sent or refused longer ago than that, and keeps the rest', async () => {
      const { pool } = await database();
      await boot(pool, { migrate: true });
      const row = (requestId: string, state: string, daysAgo: number) =>
        pool.query(
          `INSERT INTO nestjs_payouts.payouts (account, request_id, run_id, request, fingerprint, state, settled_at)
           VALUES ('default', $1, 'old-run', '{}', 'f', $2, now() - make_interval(days => $3))`,
          [requestId, state, daysAgo],
        );
      await Promise.all([
        row('old-sent', 'sent', 500),
        row('old-refused', 'refused', 401),
        row('old-unknown', 'unknown', 500),
        row('recent-sent', 'sent', 10),
      ]);

      await boot(pool, { retentionDays: 400 });
      const left = await eventually(
        async () => {
          const ids = (await rowsOf(pool, 'SELECT request_id FROM nestjs_payouts.payouts ORDER BY 1')).map(
            (r) => r.request_id,
          );
          return ids.length === 2 ? ids : undefined;
        },
        20_000,
        'the old settled payouts pruned',
      );

      expect(left).toEqual(['old-unknown', 'recent-sent']);
    }, 60_000);

    it('refuses to boot on a missing schema, naming the command to run', async () => {
      const { pool } = await database();

      const failure = await boot(pool, { schema: 'payouts_missing' }).catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(PayoutLedgerSchemaError);
      expect(failure).toMatchObject({ schema: 'payouts_missing', problem: 'missing', found: 0, expected: 1 });
      expect((failure as Error).message).toBe(
        'The payout ledger\'s schema "payouts_missing" does not exist: run "npx nestjs-payouts postgres migrate ' +
          '--schema payouts_missing" with DATABASE_URL set (or pass migrate: true to payoutLedgerPostgres())',
      );
    }, 60_000);

    it('refuses to boot on a schema newer than it knows, by the option and by the command too', async () => {
      const { url, pool } = await database();
      expect((await runCli(['postgres', 'migrate'], 30_000, { DATABASE_URL: url })).code).toBe(0);
      await pool.query('INSERT INTO nestjs_payouts.schema_version (version) VALUES ($1)', [
        PAYOUT_LEDGER_SCHEMA_VERSION + 1,
      ]);

      const failures = await Promise.all([
        boot(pool).catch((error: unknown) => error),
        boot(pool, { migrate: true }).catch((error: unknown) => error),
      ]);
      const command = await runCli(['postgres', 'migrate'], 30_000, { DATABASE_URL: url });

      for (const failure of failures) {
        expect(failure).toBeInstanceOf(PayoutLedgerSchemaError);
        expect(failure).toMatchObject({ problem: 'newer', found: 2, expected: 1 });
        expect((failure as Error).message).toContain(
          'is at version 2, newer than this version of nestjs-payouts knows (1)',
        );
        expect((failure as Error).message).toContain('npx nestjs-payouts postgres migrate never downgrades');
      }
      expect(command.code).toBe(1);
      expect(command.stderr).toContain('is at version 2, newer than this version of nestjs-payouts knows (1)');
      expect(await rowsOf(pool, 'SELECT max(version) AS v FROM nestjs_payouts.schema_version')).toEqual([{ v: 2 }]);
    }, 60_000);
  });
});
