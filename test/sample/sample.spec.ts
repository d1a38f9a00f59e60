import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliver, paymentMethodAddedNotification } from 'nestjs-payouts/testing';
import { type NodeProcessRun, runNodeProcess } from '../node-process.js';
import { findPostgresBin } from '../support/postgres-server.js';
import { findRedisServer } from '../support/redis-server.js';
import { REQUIRE_REDIS } from '../support/redis-suite.js';

/** With PostgreSQL installed too, the sample's payout run goes through the outbox. */
const POSTGRES = findPostgresBin() !== undefined;
const RUN_STEP = 'Pay 50 sellers in one payout run (nestjs-payouts/payout-runs)';
const OUTBOX_STEP = "Pay 50 sellers through the outbox, inside the app's own transaction (nestjs-payouts/postgres)";

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const SAMPLE_MAIN = fileURLToPath(new URL('../../sample/dist/main.js', import.meta.url));

/** The environment without any setting the sample reads, plus `extra`. */
function sampleEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('PAYOUTS_') || name === 'PORT' || name === 'HOST') delete env[name];
  }
  return { ...env, ...extra };
}

function runSample(env: NodeJS.ProcessEnv, args: string[] = []): Promise<NodeProcessRun> {
  return runNodeProcess([SAMPLE_MAIN, ...args], { cwd: ROOT, env, timeoutMs: 30_000 });
}

describe('npm run sample', () => {
  let server: Server | undefined;
  let serving: ChildProcess | undefined;

  beforeAll(async () => {
    // The package itself is built before the tests; the sample compiles against that build.
    await promisify(execFile)(process.execPath, [TSC, '-p', 'sample/tsconfig.json'], { cwd: ROOT });
  }, 60_000);

  afterEach(async () => {
    if (serving && serving.exitCode === null && serving.signalCode === null) {
      const exited = once(serving, 'exit');
      serving.kill('SIGTERM');
      await exited;
    }
    serving = undefined;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('runs in queue mode with --queue, on a redis-server of its own, handling each notification after its ack and paying a run of 50', async (context) => {
    if (!findRedisServer()) {
      if (REQUIRE_REDIS) throw new Error('redis-server is not on the PATH');
      context.skip('redis-server is not on the PATH');
    }
    const run = await runSample(sampleEnv(), ['--queue']);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.match(/^\d+\. .*$/gm)?.slice(0, POSTGRES ? 3 : 2)).toEqual(
      POSTGRES
        ? ['1. Redis for queue mode', '2. PostgreSQL for the payout ledger', '3. Payouts API']
        : ['1. Redis for queue mode', '2. Payouts API'],
    );
    expect(run.stdout.match(/The worker ran the handler after the acknowledgement\./g)).toHaveLength(2);
    expect(run.stdout).toContain(POSTGRES ? `6. ${OUTBOX_STEP}` : `5. ${RUN_STEP}`);
    expect(run.stdout).toContain('[SellerPayoutRun] run sellers-2030-05 completed: 50 sent, 0 refused, 0 unknown');
    expect(run.stdout).toContain(
      POSTGRES
        ? '   The mock API received each committed payout once, and never the rolled-back one.'
        : '   The mock API received each payout once.',
    );
    expect(run.stdout).toContain('All steps passed.');
  });

  it('pays a run of 50 by default when redis-server is on the PATH, on a redis-server of its own', async (context) => {
    if (!findRedisServer()) {
      if (REQUIRE_REDIS) throw new Error('redis-server is not on the PATH');
      context.skip('redis-server is not on the PATH');
    }
    const run = await runSample(sampleEnv());

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const steps = [
      'Redis for a payout run',
      ...(POSTGRES ? ['PostgreSQL for the payout ledger'] : []),
      'Payouts API',
      'Start the Nest app',
      'Create a wallet payout with PayoutsService.createPayout()',
      POSTGRES ? OUTBOX_STEP : RUN_STEP,
      'Deliver PAYMENT_METHOD_ADDED through the simulator',
      'Deliver PAYMENT_METHOD_REMOVED through the simulator',
      'Deliver a notification with a wrong token (2 attempts)',
    ];
    expect(run.stdout.match(/^\d+\. .*$/gm)).toEqual(steps.map((title, index) => `${index + 1}. ${title}`));
    expect(run.stdout).toMatch(
      /^ {3}redis-server at redis:\/\/127\.0\.0\.1:\d+, persistence off: the payout run queues its payouts there\.$/m,
    );
    expect(run.stdout).toContain('[SellerPayoutRun] run sellers-2030-05 completed: 50 sent, 0 refused, 0 unknown');
    if (POSTGRES) {
      expect(run.stdout).toMatch(
        /^ {3}PostgreSQL in \/.+payouts-sample-pg-\w+, on a Unix socket only: the payout ledger, and the app's table seller_payouts\.$/m,
      );
      expect(run.stdout).toContain(
        '   A transaction wrote sellers-2030-05-seller-51 and its seller_payouts row, then rolled back; another ' +
          'wrote the 50 sellers of the month and their rows, as pending payouts, and committed.',
      );
      expect(run.stdout).toContain(
        '   Not paid: sellers-2030-05-seller-51, whose transaction rolled back: its payout never existed.',
      );
      expect(run.stdout).toContain('   The ledger (nestjs_payouts.payouts) holds the 50, each sent.');
      expect(run.stdout).toContain(
        '   The mock API received each committed payout once, and never the rolled-back one.',
      );
    } else {
      expect(run.stdout).toContain('   The mock API received each payout once.');
      expect(run.stdout).toContain(
        '\nSkipped: paying through the outbox, as PostgreSQL is not installed (on Debian: apt-get install postgresql).\n',
      );
    }
    // Notifications are handled in the request, as without Redis: queue mode stays off.
    expect(run.stdout).not.toContain('The worker ran the handler after the acknowledgement.');
    if (POSTGRES) expect(run.stdout).not.toContain('Skipped');
    expect(run.stdout).toMatch(/All steps passed\.\n$/);
  });

  it('runs every step against the embedded mock API and exits 0, and says why the payout run is skipped without redis-server', async () => {
    // A PATH with no redis-server on it.
    const run = await runSample(sampleEnv({ PATH: mkdtempSync(join(tmpdir(), 'sample-no-redis-')) }));

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('   Express adapter, no global prefix.');
    const steps = run.stdout.match(/^\d+\. .*$/gm);
    expect(steps).toEqual([
      '1. Payouts API',
      '2. Start the Nest app',
      '3. Create a wallet payout with PayoutsService.createPayout()',
      '4. Deliver PAYMENT_METHOD_ADDED through the simulator',
      '5. Deliver PAYMENT_METHOD_REMOVED through the simulator',
      '6. Deliver a notification with a wrong token (2 attempts)',
    ]);
    expect(run.stdout).toContain(
      '\nSkipped: paying 50 sellers in one payout run, as no redis-server is on the PATH ' +
        '(on Debian: apt-get install redis-server).\n',
    );
    expect(run.stdout).toMatch(/Payouts API replied HTTP 201: \{"id":"po_[0-9a-f]{16}","status":"pending"/);
    expect(run.stdout).toContain('The mock API accepted both credential headers and every field of the body.');
    expect(run.stdout).toContain(
      '[PaymentMethodsListener] onAdded: saved card ending 4242 (pmt_3Vb8Hs1Ty6) for shopper shp_7Qk2Lm9Xr4',
    );
    expect(run.stdout).toContain(
      '[PaymentMethodsListener] onRemoved: removed pmt_3Vb8Hs1Ty6 from shopper shp_7Qk2Lm9Xr4',
    );
    expect(run.stdout.match(/Sender, attempt 1: HTTP 200 \{"ResultCode":0\} -> acknowledged/g)).toHaveLength(2);
    expect(run.stdout).toContain(
      'Sender, attempt 2: HTTP 401 {"statusCode":401,"message":"Unauthorized"} -> not acknowledged',
    );
    expect(run.stdout).toMatch(/All steps passed\.\n$/);
  });

  it('runs the same steps on Fastify behind a global prefix', async () => {
    const run = await runSample(sampleEnv(), ['--adapter', 'fastify', '--prefix', 'api']);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // Two more with redis-server on the PATH: its start and the payout run; one more with PostgreSQL, its start.
    expect(run.stdout.match(/^\d+\. .*$/gm)).toHaveLength(findRedisServer() ? (POSTGRES ? 9 : 8) : 6);
    expect(run.stdout).toContain('   Fastify adapter, global prefix "api".');
    expect(run.stdout).toMatch(
      /Notification route: http:\/\/127\.0\.0\.1:\d+\/api\/payouts\/notifications\?token=<secret>/,
    );
    expect(run.stdout.match(/Sender, attempt 1: HTTP 200 \{"ResultCode":0\} -> acknowledged/g)).toHaveLength(2);
    expect(run.stdout).toContain(
      '[PaymentMethodsListener] onRemoved: removed pmt_3Vb8Hs1Ty6 from shopper shp_7Qk2Lm9Xr4',
    );
    expect(run.stdout).toMatch(/All steps passed\.\n$/);
  });

  it('refuses an adapter it does not know', async () => {
    const run = await runSample(sampleEnv(), ['--adapter', 'koa']);

    expect(run.code).toBe(1);
    expect(run.stderr).toBe('\n--adapter must be express or fastify; got "koa".\n');
  });

  it('targets the payouts API named by the environment, and names the step that failed', async () => {
    const seen: { apiKey: unknown; authorization: unknown; url: unknown }[] = [];
    server = createServer((req, res) => {
      seen.push({ apiKey: req.headers['x-api-key'], authorization: req.headers.authorization, url: req.url });
      req
        .resume()
        .on('end', () => res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"forbidden"}'));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;

    const run = await runSample(
      sampleEnv({
        PAYOUTS_BASE_URL: `http://127.0.0.1:${port}/v1`,
        PAYOUTS_API_KEY: 'env-api-key',
        PAYOUTS_ACCESS_TOKEN: 'env-access-token',
      }),
    );

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`Using http://127.0.0.1:${port}/v1 with the credentials from the environment.`);
    expect(run.stderr).toMatch(
      /^\nStep 3 \(Create a wallet payout with PayoutsService\.createPayout\(\)\) failed: Payout request ".+" \(POST \/v1\/payouts\) was rejected by the payouts API with HTTP 403\.\n$/,
    );
    expect(run.stderr).not.toContain('env-api-key');
    expect(run.stderr).not.toContain('env-access-token');
    expect(seen).toEqual([{ apiKey: 'env-api-key', authorization: 'Bearer env-access-token', url: '/v1/payouts' }]);
  });

  it('refuses a partial set of credentials', async () => {
    const run = await runSample(sampleEnv({ PAYOUTS_BASE_URL: 'https://payouts.example.com' }));

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'Set all of PAYOUTS_BASE_URL, PAYOUTS_API_KEY, PAYOUTS_ACCESS_TOKEN, or none to use the mock API; ' +
        'missing: PAYOUTS_API_KEY, PAYOUTS_ACCESS_TOKEN.',
    );
  });

  it('stays up with --serve and handles notifications sent to it', async () => {
    const secret = 'serve-test-secret';
    const child = spawn(process.execPath, [SAMPLE_MAIN, '--serve'], {
      cwd: ROOT,
      env: sampleEnv({ PORT: '0', HOST: '127.0.0.1', PAYOUTS_NOTIFICATIONS_SECRET: secret }),
    });
    serving = child;
    let stdout = '';
    child.stdout.setEncoding('utf8');
    const ready = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        stdout += chunk;
        const route =
          /Try: npx nestjs-payouts simulate --url "(http:\/\/127\.0\.0\.1:\d+\/payouts\/notifications)\?token=<secret>"/.exec(
            stdout,
          );
        if (stdout.includes('Press Ctrl+C to stop.') && route) resolve(route[1]!);
      });
      child.on('exit', (code) => reject(new Error(`the sample exited with ${code} before serving:\n${stdout}`)));
    });
    const route = await ready;

    const report = await deliver(`${route}?token=${secret}`, paymentMethodAddedNotification(), { attempts: 1 });

    expect(report.delivered).toBe(true);
    expect(stdout).not.toContain(secret);
    await expect.poll(() => stdout).toContain('[PaymentMethodsListener] onAdded: saved card ending 4242');

    // Stopped as Ctrl+C would: the PostgreSQL cluster it started stops with it, and its folder goes.
    const postgresFolder = / PostgreSQL in (\/\S+), on a Unix socket/.exec(stdout)?.[1];
    expect(postgresFolder !== undefined).toBe(POSTGRES);
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    await exited;
    if (postgresFolder) expect(existsSync(postgresFolder)).toBe(false);
  });
});
