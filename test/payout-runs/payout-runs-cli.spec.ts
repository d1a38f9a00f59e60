import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

const PASSWORD = 'runs-cli-redis-password-7b3d';
/** A request_id with a line break and an escape sequence, as an outside value may hold. */
const ODD_ID = 'odd\n\u001b[31mid';

describeWithRedis('nestjs-payouts payout-runs (a real process against a real Redis)', () => {
  let redis: RedisServer;
  let provider: MockPayoutsProvider;
  let app: RunsApp;
  let url: string;
  let where: string;

  beforeAll(async () => {
    redis = await RedisServer.start({ args: ['--requirepass', PASSWORD] });
    url = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
    where = `the payout runs of the unnamed account at 127.0.0.1:${redis.port}`;
    provider = await MockPayoutsProvider.start((requestId, seenBefore) =>
      requestId === 'cli-ok' || seenBefore > 0 ? { kind: 'created' } : { kind: 'reset' },
    );
    app = await startRunsApp(provider.baseUrl, {
      connection: { host: '127.0.0.1', port: redis.port, password: PASSWORD },
      rateLimit: false,
      backoffMs: 20,
    });
    await app.runs.enqueue([payout('cli-ok'), payout('cli-reset'), payout(ODD_ID)], { runId: 'cli-run' });
    await eventually(
      async () => ((await app.runs.progress('cli-run'))?.completedAt ? true : undefined),
      15_000,
      'the run completes',
    );
  });
  afterAll(async () => {
    await app?.app.close();
    await provider?.close();
    await redis?.close();
  });

  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(['payout-runs', ...args], 15_000, env);

  it('shows the progress of a run', async () => {
    const run = await cli(['progress', '--run', 'cli-run'], { REDIS_URL: url });

    expect([run.code, run.stderr]).toEqual([0, '']);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Run cli-run: 3 payouts, completed \d{4}-\d\d-\d\dT/);
    expect(lines.slice(1)).toEqual([
      '  queued    0',
      '  sending   0',
      '  retrying  0',
      '  sent      1',
      '  refused   0',
      '  unknown   2',
    ]);
  });

  it('lists the unknown outcomes with every outside value escaped, and never the password', async () => {
    const run = await cli(['unknown', '--redis-url', url]);

    expect([run.code, run.stderr]).toEqual([0, '']);
    const [heading, ...rows] = run.stdout.trimEnd().split('\n');
    expect(heading).toBe(`2 payouts of unknown outcome in ${where}`);
    expect(rows.map((row) => row.split('  ').slice(0, 3)).sort()).toEqual([
      ['cli-reset', 'run cli-run', '1 request'],
      ['odd\\n\\u001b[31mid', 'run cli-run', '1 request'],
    ]);
    expect(rows.every((row) => row.includes('PayoutOutcomeUnknownError'))).toBe(true);
    expect(run.stdout).not.toContain('\u001b');
    expect(run.stdout + run.stderr).not.toContain(PASSWORD);
  });

  it('exits 1 when no payout of the account is of unknown outcome', async () => {
    const run = await cli(['unknown', '--account', 'eu'], { REDIS_URL: url });

    expect([run.code, run.stdout, run.stderr]).toEqual([
      1,
      `0 payouts of unknown outcome in the payout runs of eu at 127.0.0.1:${redis.port}\n`,
      '',
    ]);
  });

  it('refuses a Redis URL given without --redis-url, never showing it', async () => {
    const run = await cli(['unknown', url], { REDIS_URL: '' });

    expect([run.code, run.stdout, run.stderr]).toEqual([
      2,
      '',
      'Error: unexpected argument #2 (not shown: it may be a secret); it looks like a URL: give it with --redis-url\n' +
        'Run "nestjs-payouts payout-runs --help" for the options.\n',
    ]);
  });

  it('resolves one as absent: it is sent once more under the same request_id', async () => {
    const run = await cli(['resolve', '--request-id', 'cli-reset', '--as', 'absent', '--by', 'ops'], {
      REDIS_URL: url,
    });

    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toBe(
      `Resolved payout cli-reset of ${where} as absent: it is sent once more under the same request_id\n`,
    );
    await eventually(
      async () => (app.results.sent.some((result) => result.requestId === 'cli-reset') ? true : undefined),
      15_000,
      'sent again',
    );
    expect(provider.requests.filter((request) => request.requestId === 'cli-reset')).toHaveLength(2);
    expect(app.results.sent.find((result) => result.requestId === 'cli-reset')).toMatchObject({
      resolution: { decision: 'absent', by: 'ops' },
    });
  });

  it('says why a payout was not resolved, and refuses bad options without echoing the URL', async () => {
    const missing = await cli(['resolve', '--request-id', 'cli-ok', '--as', 'sent'], { REDIS_URL: url });
    const bad = await cli(['resolve', '--request-id', 'x', '--as', 'maybe'], { REDIS_URL: url });
    const badUrl = await cli(['unknown', '--redis-url', `http://:${PASSWORD}@127.0.0.1:1`]);
    const away = await cli(['unknown', '--redis-url', `redis://:${PASSWORD}@127.0.0.1:1`, '--timeout-ms', '2000']);

    expect([missing.code, missing.stderr]).toEqual([
      1,
      `Error: payout cli-ok of ${where} was not resolved: its outcome is not unknown.\n`,
    ]);
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([2, 'Error: resolve takes --as sent or --as absent']);
    expect([badUrl.code, badUrl.stderr.split('\n')[0]]).toEqual([
      2,
      'Error: --redis-url must be a redis:// or rediss:// URL such as redis://:<password>@localhost:6379 (the value is not shown)',
    ]);
    expect(away.code).toBe(2);
    expect(away.stderr).toMatch(
      /^Error: cannot reach Redis for the payout runs of the unnamed account at 127\.0\.0\.1:1 /,
    );
    expect(badUrl.stderr + away.stderr + away.stdout).not.toContain(PASSWORD);
  });
});
