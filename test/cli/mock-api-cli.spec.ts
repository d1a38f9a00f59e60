import { afterEach, describe, expect, it } from 'vitest';
import { NodeServerProcess } from '../node-server-process.js';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { CLI_PATH, runCli } from './run-cli.js';

const API_KEY = 'cli-mock-api-key-8d2f';
const ACCESS_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjbGkifQ.cli-mock-token-51c0';
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/.source;
const READY = /^Mock payouts API listening on (http:\/\/127\.0\.0\.1:\d+) \(POST \/payouts\)$/;

/** The environment without the credentials the command reads, plus `extra`. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { PAYOUTS_API_KEY: _key, PAYOUTS_ACCESS_TOKEN: _token, ...env } = process.env;
  return { ...env, ...extra };
}

async function post(
  baseUrl: string,
  body: unknown,
  headers: Record<string, string>,
  path = '/payouts',
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

describe('nestjs-payouts mock-api (a real process)', () => {
  let server: NodeServerProcess | undefined;

  afterEach(async () => {
    await server?.kill();
    server = undefined;
  });

  async function startMockApi(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
    const started = await NodeServerProcess.start([CLI_PATH, 'mock-api', '--port', '0', ...args], {
      env,
      ready: READY,
      timeoutMs: 15_000,
    });
    server = started.process;
    await server.waitForLine(/Press Ctrl\+C to stop\.$/, 15_000);
    return started.ready[1]!;
  }

  async function stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    process.kill(server!.pid, signal);
    return server!.waitForExit(15_000);
  }

  it('prints its URL and each request with the credentials hidden, and stops on SIGTERM', async () => {
    const baseUrl = await startMockApi([], cliEnv({ PAYOUTS_API_KEY: API_KEY, PAYOUTS_ACCESS_TOKEN: ACCESS_TOKEN }));
    const credentials = { 'x-api-key': API_KEY, authorization: `Bearer ${ACCESS_TOKEN}` };

    const created = await post(baseUrl, walletPayoutRequest('cli-1'), credentials);
    const wrongKey = await post(baseUrl, walletPayoutRequest('cli-2'), { ...credentials, 'x-api-key': 'wrong-key' });
    const invalid = await post(baseUrl, { ...walletPayoutRequest('cli-3'), country_code: 'Kenya' }, credentials);
    const echoed = await post(baseUrl, walletPayoutRequest('cli-4'), credentials, `/payouts?key=${API_KEY}`);
    await server!.waitForLine(/request_id=cli-4 /, 15_000);

    expect(created.status).toBe(201);
    expect(wrongKey).toEqual({ status: 401, body: { error: 'invalid_api_key' } });
    expect(invalid.status).toBe(400);
    expect(echoed.status).toBe(201);
    const lines = server!.lines;
    expect(lines.slice(0, 4)).toEqual([
      `Mock payouts API listening on ${baseUrl} (POST /payouts)`,
      "GET /payouts/<request_id> answers a payout as a reconcile lookup asks; the payout's own id (po_…) works too.",
      'Accepting the X-API-Key and access token given (not shown).',
      `Point the app at it with PAYOUTS_BASE_URL=${baseUrl}. Press Ctrl+C to stop.`,
    ]);
    expect(lines.slice(4)).toEqual([
      expect.stringMatching(
        new RegExp(`^${TIMESTAMP} POST /payouts request_id=cli-1 -> 201, created payout po_[0-9a-f]{16}$`),
      ),
      expect.stringMatching(new RegExp(`^${TIMESTAMP} POST /payouts request_id=cli-2 -> 401 invalid_api_key$`)),
      expect.stringMatching(
        new RegExp(
          `^${TIMESTAMP} POST /payouts request_id=cli-3 -> 400 invalid_request: country_code: expected a two-letter code$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^${TIMESTAMP} POST "/payouts\\?key=\\[redacted\\]" request_id=cli-4 -> 201, created payout po_[0-9a-f]{16}$`,
        ),
      ),
    ]);
    const all = lines.join('\n') + server!.stderr;
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain(ACCESS_TOKEN);

    expect(await stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(server!.lines.at(-1)).toBe('Stopped.');
  });

  it('makes up credentials when none are given, prints them once, and stops on SIGINT', async () => {
    const baseUrl = await startMockApi([], cliEnv());
    const apiKey = server!.lines.find((line) => line.startsWith('  PAYOUTS_API_KEY='))?.split('=')[1];
    const accessToken = server!.lines.find((line) => line.startsWith('  PAYOUTS_ACCESS_TOKEN='))?.split('=')[1];
    expect(apiKey).toMatch(/^sk_test_[0-9a-f]{24}$/);
    expect(accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const created = await post(baseUrl, walletPayoutRequest('cli-made-up'), {
      'x-api-key': apiKey!,
      authorization: `Bearer ${accessToken}`,
    });
    await server!.waitForLine(/request_id=cli-made-up /, 15_000);

    expect(created.status).toBe(201);
    expect(server!.lines.filter((line) => line.includes(apiKey!))).toHaveLength(1);
    expect(server!.lines.filter((line) => line.includes(accessToken!))).toHaveLength(1);
    expect(await stop('SIGINT')).toEqual({ code: 0, signal: null });
  });

  it('escapes control characters from the request in what it prints', async () => {
    const baseUrl = await startMockApi(
      ['--latency-ms', '1'],
      cliEnv({ PAYOUTS_API_KEY: API_KEY, PAYOUTS_ACCESS_TOKEN: ACCESS_TOKEN }),
    );

    await post(baseUrl, walletPayoutRequest('forged\n2030-01-01 POST /payouts -> 201\u001b[2J'), {
      'x-api-key': API_KEY,
      authorization: `Bearer ${ACCESS_TOKEN}`,
    });
    const { input: line } = await server!.waitForLine(/request_id=/, 15_000);

    expect(line).toMatch(
      new RegExp(
        `^${TIMESTAMP} POST /payouts request_id="forged\\\\n2030-01-01 POST /payouts -> 201\\\\u001b\\[2J" -> 201, `,
      ),
    );
    expect(server!.lines.filter((printed) => printed.includes('forged'))).toHaveLength(1);
  });

  it.each([
    [['--port', '99999'], 'Error: --port must be a port from 0 to 65535; got 99999'],
    [
      ['--latency-ms', 'soon'],
      'Error: --latency-ms must be a whole number, 0 or more, of milliseconds up to 2147483647 (about 24 days); got soon',
    ],
    [
      ['--api-key', 'has space-secret-77'],
      'Error: --api-key (or PAYOUTS_API_KEY) must be printable characters without spaces (the value is not shown)',
    ],
    [['--colour'], 'Error: unknown option --colour'],
  ])('exits 2 for %j, naming the option', async (args, message) => {
    const run = await runCli(['mock-api', ...args], 15_000, cliEnv());

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')[0]).toBe(message);
    expect(run.stderr).toContain('Run "nestjs-payouts mock-api --help" for the options.');
    expect(run.stderr).not.toContain('space-secret-77');
  });

  it('exits 2 when the port is taken, and prints its help', async () => {
    const baseUrl = await startMockApi([], cliEnv());
    const port = new URL(baseUrl).port;

    const taken = await runCli(['mock-api', '--port', port], 15_000, cliEnv());
    const help = await runCli(['mock-api', '--help'], 15_000, cliEnv());
    const commands = await runCli(['--help'], 15_000, cliEnv());

    expect(taken.code).toBe(2);
    expect(taken.stderr).toBe(
      `Error: cannot listen on 127.0.0.1 port ${port} (EADDRINUSE).\nAnother program uses that port: choose another with --port.\n`,
    );
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: nestjs-payouts mock-api [options]');
    expect(commands.stdout).toContain(
      '  mock-api    Run a mock of the payouts API for your app to call (POST /payouts, GET /payouts/<id>)',
    );
  });
});
