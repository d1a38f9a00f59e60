import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockPayoutsApi } from 'nestjs-payouts/testing';
import { runNodeProcess } from '../node-process.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { compileSnippets, markedBlock, markedBlockNames, DOCUMENTS, ROOT } from './documentation.js';

/*
 * The main snippet of each guide (the block marked `<!-- tested: main -->`), compiled as pasted and booted as an app:
 * a Nest app started from it in its own Node process, against the mock payouts API (and a real redis-server where
 * the snippet needs one), with a request made through it. Needs `npm run build`, as `nestjs-payouts` resolves to the
 * built package, as for the documentation's type check.
 */

const CREDENTIALS = { apiKey: 'docs-api-key', accessToken: 'docs-access-token' };
const SECRET = 'docs-notifications-secret';

interface Boot {
  /** The module to start: an export of the snippet (`snippet.AppModule`) or one the runner declares. */
  readonly module: string;
  /** Code before the app starts: imports and, for a snippet that is a part of an app, the app around it. */
  readonly prelude?: string;
  /** Code run with the app listening (`app`, its `url`), which records what it saw in `results`. */
  readonly check: string;
  readonly redis?: boolean;
}

/** What each guide's main snippet is booted with; a guide that marks a main snippet gets its line here. */
const BOOTS: Record<string, Boot> = {
  'docs/payouts.md': {
    module: 'snippet.AppModule',
    prelude: `import { PayoutsService } from 'nestjs-payouts';`,
    check: `results.status = (await app.get(PayoutsService).createPayout(walletPayout('docs-payouts-1'))).status;`,
  },
  'docs/notifications.md': {
    module: 'snippet.AppModule',
    check: `results.delivered = await notify(\`\${url}/payouts/notifications?token=${SECRET}\`);`,
  },
  'docs/accounts.md': {
    module: 'snippet.AppModule',
    check: `
      results.eu = await notify(\`\${url}/payouts/eu/notifications?token=eu-${SECRET}\`);
      results.ke = await notify(\`\${url}/payouts/ke/notifications?token=ke-${SECRET}\`);
      results.status = (await app.get(snippet.SellerPayouts).payOut('KE', '254700000001', '10.00', 'docs-ke-1')).status;`,
  },
  'docs/observability.md': {
    module: 'snippet.AppModule',
    check: `results.delivered = await notify(\`\${url}/payouts/notifications?token=${SECRET}\`);`,
  },
  'docs/health-and-reconciliation.md': {
    module: 'OneAccountApp',
    prelude: `
      import { Module } from '@nestjs/common';
      import { PayoutsModule } from 'nestjs-payouts';

      @Module({
        imports: [
          PayoutsModule.forRoot({
            baseUrl: process.env.PAYOUTS_BASE_URL!,
            apiKey: process.env.PAYOUTS_API_KEY!,
            accessToken: process.env.PAYOUTS_ACCESS_TOKEN!,
            notifications: false,
          }),
          snippet.HealthModule,
        ],
      })
      class OneAccountApp {}`,
    check: `
      for (const probe of ['live', 'ready']) {
        const reply = await fetch(\`\${url}/health/\${probe}\`);
        results[probe] = { status: reply.status, body: await reply.json() };
      }`,
  },
  'docs/several-instances.md': {
    redis: true,
    module: 'snippet.AppModule',
    check: `results.delivered = await notify(\`\${url}/payouts/notifications?token=${SECRET}\`);`,
  },
  'docs/queue-mode.md': {
    redis: true,
    module: 'snippet.AppModule',
    check: `results.delivered = await notify(\`\${url}/payouts/notifications?token=${SECRET}\`);`,
  },
  'docs/payout-runs.md': {
    redis: true,
    module: 'snippet.AppModule',
    prelude: `import { getPayoutRunsToken, type PayoutRunsService } from 'nestjs-payouts/payout-runs';`,
    check: `
      await app.get(snippet.SellerPayouts).payMonthEnd('2030-05', [walletPayout('docs-run-1')]);
      const runs = app.get<PayoutRunsService>(getPayoutRunsToken());
      results.progress = await waitFor(async () => {
        const progress = await runs.progress('sellers-2030-05');
        return progress?.completedAt ? progress.counts : undefined;
      });`,
  },
};

/** What every runner imports: a valid payout, a notification delivered once, and a bounded wait. */
const SUPPORT = `
import { deliver, paymentMethodAddedNotification } from 'nestjs-payouts/testing';

export const walletPayout = (requestId: string) => ({
  payout_method: {
    type: 'wallet' as const,
    payment_method: 'mpesa_ke',
    beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: '254700000001' } },
  },
  amount: { value: '10.00', currency_code: 'KES' },
  country_code: 'KE',
  purpose: 'seller_earnings',
  reference: 'docs',
  request_id: requestId,
});

export async function notify(url: string): Promise<boolean> {
  return (await deliver(url, paymentMethodAddedNotification(), { attempts: 1 })).delivered;
}

/** Polls until \`read\` gives a value, for up to a minute: the run's worker sends in the background. */
export async function waitFor<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('gave up waiting');
}
`;

function runner({ module, prelude = '', check }: Boot): string {
  return `
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { notify, waitFor, walletPayout } from '../support.js';
import * as snippet from './snippet.js';
${prelude}

void notify, waitFor, walletPayout, snippet;
const results: Record<string, unknown> = {};
const app = await NestFactory.create(${module}, { logger: ['error', 'warn'], abortOnError: false });
await app.listen(0, '127.0.0.1');
const url = await app.getUrl();
try {
  ${check}
} finally {
  await app.close();
}
console.log(\`results: \${JSON.stringify(results)}\`);
`;
}

const RUN_LIMIT_MS = 90_000;
const guides = DOCUMENTS.filter((document) => markedBlockNames(document).includes('main'));

describe('the main snippet of each guide, booted', () => {
  // Inside the package, so that `nestjs-payouts` resolves to the built package through its own `exports`.
  const workDir = mkdtempSync(join(ROOT, '.readme-main-'));
  const folder = (document: string) => document.replace(/[^A-Za-z0-9]+/g, '-');
  let api: MockPayoutsApi;

  beforeAll(async () => {
    api = await MockPayoutsApi.start(CREDENTIALS);
    writeFileSync(join(workDir, 'support.ts'), SUPPORT);
    for (const document of guides) {
      const setup = BOOTS[document];
      if (!setup) continue;
      mkdirSync(join(workDir, folder(document)));
      writeFileSync(join(workDir, folder(document), 'snippet.ts'), markedBlock(document, 'main').code);
      writeFileSync(join(workDir, folder(document), 'run.ts'), runner(setup));
    }
    compileSnippets(workDir, ['**/*.ts'], 150_000);
  }, 180_000);
  afterAll(async () => {
    await api?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('has a main snippet in each guide that shows an app, and a way to boot each', () => {
    expect(guides).toEqual(expect.arrayContaining(['docs/payout-runs.md', 'docs/health-and-reconciliation.md']));
    expect(guides.filter((document) => !BOOTS[document])).toEqual([]);
  });

  async function boot(document: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const run = await runNodeProcess([join(workDir, 'dist', folder(document), 'run.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        PAYOUTS_BASE_URL: api.baseUrl,
        PAYOUTS_API_KEY: CREDENTIALS.apiKey,
        PAYOUTS_ACCESS_TOKEN: CREDENTIALS.accessToken,
        PAYOUTS_NOTIFICATIONS_SECRET: SECRET,
        ...env,
      },
      timeoutMs: RUN_LIMIT_MS,
    });
    const line = /^results: (.*)$/m.exec(run.stdout)?.[1];
    expect({ code: run.code, stderr: run.stderr, found: line !== undefined }).toMatchObject({ code: 0, found: true });
    return { ...(JSON.parse(line!) as Record<string, unknown>), stdout: run.stdout };
  }

  it(
    'docs/payouts.md: creates a payout through the configured module',
    async () => {
      const results = await boot('docs/payouts.md');
      expect(results.status).toBe(201);
      expect(api.callsFor('docs-payouts-1').map((call) => call.status)).toEqual([201]);
    },
    RUN_LIMIT_MS,
  );

  it(
    'docs/notifications.md: acknowledges a notification and runs the handlers',
    async () => {
      const results = await boot('docs/notifications.md');
      expect(results.delivered).toBe(true);
      expect(results.stdout).toMatch(/^\S+ saved a card ending \d{4} \(/m);
      expect(results.stdout).toMatch(/^notification PAYMENT_METHOD_ADDED at /m);
    },
    RUN_LIMIT_MS,
  );

  it(
    'docs/accounts.md: two accounts, each on its own route, and a payout from one',
    async () => {
      const results = await boot('docs/accounts.md', {
        EU_PAYOUTS_API_KEY: 'eu-key',
        EU_PAYOUTS_ACCESS_TOKEN: 'eu-token',
        EU_PAYOUTS_NOTIFICATIONS_SECRET: `eu-${SECRET}`,
        KE_PAYOUTS_BASE_URL: api.baseUrl,
        KE_PAYOUTS_API_KEY: CREDENTIALS.apiKey,
        KE_PAYOUTS_ACCESS_TOKEN: CREDENTIALS.accessToken,
        KE_PAYOUTS_NOTIFICATIONS_SECRET: `ke-${SECRET}`,
      });
      expect(results).toMatchObject({ eu: true, ke: true, status: 201 });
      expect(results.stdout).toMatch(/^EU shopper \S+ saved \S+$/m);
      expect(results.stdout).toMatch(/^ke: \S+ saved a card \(/m);
    },
    RUN_LIMIT_MS,
  );

  it(
    'docs/observability.md: boots with OpenTelemetry and acknowledges a notification',
    async () => {
      expect((await boot('docs/observability.md')).delivered).toBe(true);
    },
    RUN_LIMIT_MS,
  );

  it(
    'docs/health-and-reconciliation.md: both probes are up in a one-account app',
    async () => {
      const results = await boot('docs/health-and-reconciliation.md');
      expect(results.live).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(results.ready).toMatchObject({ status: 200, body: { status: 'ok', info: { payouts: { status: 'up' } } } });
    },
    RUN_LIMIT_MS,
  );

  describeWithRedis('with Redis', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await RedisServer.start();
    });
    afterAll(async () => {
      await redis?.close();
    });
    const redisEnv = () => ({ REDIS_URL: redis.url, REDIS_HOST: '127.0.0.1', REDIS_PORT: String(redis.port) });

    it(
      'docs/several-instances.md: acknowledges a notification with the Redis dedupe store',
      async () => {
        expect((await boot('docs/several-instances.md', redisEnv())).delivered).toBe(true);
      },
      RUN_LIMIT_MS,
    );

    it(
      'docs/queue-mode.md: acknowledges a notification once queued',
      async () => {
        expect((await boot('docs/queue-mode.md', redisEnv())).delivered).toBe(true);
      },
      RUN_LIMIT_MS,
    );

    it(
      'docs/payout-runs.md: pays a run of one, once',
      async () => {
        const results = await boot('docs/payout-runs.md', redisEnv());
        expect(results.progress).toMatchObject({ sent: 1, refused: 0, unknown: 0, total: 1 });
        expect(api.callsFor('docs-run-1').map((call) => call.status)).toEqual([201]);
      },
      RUN_LIMIT_MS,
    );
  });
});
