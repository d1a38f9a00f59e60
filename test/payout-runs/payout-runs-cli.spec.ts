import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { CLI_PATH, runCli } from '../cli/run-cli.js';
import { eventually } from '../support/eventually.js';
import { MockPayoutsProvider } from '../support/mock-payouts-provider.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { payout, type RunsApp, startRunsApp } from './payout-runs-test-app.js';

const PASSWORD = 'runs-cli-redis-password-7b3d';
/** A request_id with a line break and an escape sequence, as an outside value may hold. */
const ODD_ID = 'odd\n\u001b[31mid';
/** Redrawing a terminal line: back to the start of the line above, and clear it. */
const REDRAW = '\u001b[1F\u001b[2K';

/** util-linux's `script`, which runs a command on a terminal of its own: the TTY rendering is tested with it. */
const SCRIPT = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v script'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
})();

/** A command still running, its output so far, and its exit status once it ends. */
interface Running {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

function spawned(command: string, args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

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

  const running: Running[] = [];
  const watchedApps: RunsApp[] = [];
  afterEach(async () => {
    for (const { child } of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(watchedApps.splice(0).map((started) => started.app.close()));
  });

  /** A run queued on a prefix of its own by an app that runs no worker: it waits until `work()` starts one. */
  const waitingRun = async (prefix: string, runId: string, ids: string[]) => {
    const options = {
      connection: { host: '127.0.0.1', port: redis.port, password: PASSWORD },
      prefix,
      rateLimit: false as const,
      backoffMs: 20,
    };
    const producer = await startRunsApp(provider.baseUrl, { ...options, worker: false });
    watchedApps.push(producer);
    await producer.runs.enqueue(
      ids.map((id) => payout(id)),
      { runId },
    );
    return {
      work: async () => {
        watchedApps.push(await startRunsApp(provider.baseUrl, options));
      },
    };
  };

  const watching = (args: string[]) => {
    const watch = spawned(process.execPath, [CLI_PATH, 'payout-runs', 'progress', '--watch', ...args], {
      REDIS_URL: url,
    });
    running.push(watch);
    return watch;
  };

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

  it('watches a completed run: its counts, then its completion, and exit status 0 (not a terminal: plain lines)', async () => {
    const run = await cli(['progress', '--run', 'cli-run', '--watch'], { REDIS_URL: url });

    expect([run.code, run.stderr]).toEqual([0, '']);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'Run cli-run: 3 of 3 ended (100%): 1 sent, 0 refused, 2 unknown; 0 queued, 0 sending, 0 retrying; completed',
    );
    expect(lines[1]).toMatch(/^Run cli-run completed at \d{4}-\d\d-\d\dT[\d:.]+Z: 1 sent, 0 refused, 2 unknown of 3$/);
    expect(lines).toHaveLength(2);
    expect(run.stdout).not.toContain('\u001b');
  });

  it('watches a run until it completes, a line per change of its counts, and says when there is no such run', async () => {
    const { work } = await waitingRun('watched', 'watched-run', ['cli-ok', 'watched-reset']);
    const watch = watching(['--run', 'watched-run', '--prefix', 'watched', '--interval-ms', '100']);
    const first =
      'Run watched-run: 0 of 2 ended (0%): 0 sent, 0 refused, 0 unknown; 2 queued, 0 sending, 0 retrying; ' +
      '-/s, time left unknown';
    await eventually(async () => (watch.stdout().startsWith(`${first}\n`) ? true : undefined), 15_000, 'first line');

    await work();
    const code = await watch.exited;
    const missing = await cli(['progress', '--run', 'no-such-run', '--watch', '--prefix', 'watched'], {
      REDIS_URL: url,
    });

    expect([code, watch.stderr()]).toEqual([0, '']);
    const lines = watch.stdout().trimEnd().split('\n');
    expect(lines[0]).toBe(first);
    expect(lines.at(-1)).toMatch(/^Run watched-run completed at \S+: 1 sent, 0 refused, 1 unknown of 2$/);
    expect(lines.at(-2)).toMatch(/^Run watched-run: 2 of 2 ended \(100%\): 1 sent, 0 refused, 1 unknown; .*completed$/);
    // One line per change: no two lines alike in a row, the last two (the counts, then the completion) apart.
    const counts = lines.slice(0, -1).map((line) => line.replace(/; [^;]*$/, ''));
    expect(counts.every((line, index) => index === 0 || line !== counts[index - 1])).toBe(true);
    expect(watch.stdout()).not.toContain('\u001b');
    expect(watch.stdout()).not.toContain(PASSWORD);
    expect([missing.code, missing.stderr]).toEqual([
      1,
      `Error: no run no-such-run in the payout runs of the unnamed account at 127.0.0.1:${redis.port}.\n`,
    ]);
  });

  it('stops watching on Ctrl-C with exit status 130; the run goes on', async () => {
    await waitingRun('interrupted', 'interrupted-run', ['cli-ok']);
    const watch = watching(['--run', 'interrupted-run', '--prefix', 'interrupted', '--interval-ms', '100']);
    await eventually(async () => (watch.stdout().includes('\n') ? true : undefined), 15_000, 'first line');

    watch.child.kill('SIGINT');

    expect(await watch.exited).toBe(130);
    expect(watch.stderr()).toBe('Stopped watching; the run goes on.\n');
    expect(watch.stdout()).toMatch(/^Run interrupted-run: 0 of 1 ended \(0%\)/);
  });

  it.skipIf(SCRIPT === undefined)(
    'redraws one progress bar in place on a terminal, until the run completes',
    async () => {
      const { work } = await waitingRun('terminal', 'terminal-run', ['cli-ok']);
      const command = [process.execPath, CLI_PATH, 'payout-runs', 'progress', '--watch']
        .concat(['--run', 'terminal-run', '--prefix', 'terminal', '--interval-ms', '100'])
        .map((part) => `'${part}'`)
        .join(' ');
      // A terminal wide enough for the whole line (script's own is 80 columns).
      const onTerminal = `stty cols 120; ${command}`;
      // `script` runs the command on a terminal of its own (-e: with the command's exit status), its screen on stdout.
      const watch = spawned(SCRIPT!, ['-qec', onTerminal, '/dev/null'], { REDIS_URL: url });
      running.push(watch);
      await eventually(async () => (watch.stdout().includes(REDRAW) ? true : undefined), 15_000, 'a redraw');

      await work();

      expect(await watch.exited).toBe(0);
      const screen = watch.stdout();
      expect(screen).toMatch(/^terminal-run \[-{30}\]   0% 0\/1  sent 0  refused 0  unknown 0  /);
      expect(screen).toContain(
        `${REDRAW}terminal-run [${'#'.repeat(30)}] 100% 1/1  sent 1  refused 0  unknown 0  completed`,
      );
      expect(screen).toMatch(/Run terminal-run completed at \S+: 1 sent, 0 refused, 0 unknown of 1\r?\n$/);
      expect(screen).not.toContain(PASSWORD);
    },
  );

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
