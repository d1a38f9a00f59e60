import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import {
  type DeliveryReport,
  deliver,
  MockPayoutsApi,
  paymentMethodAddedNotification,
  paymentMethodRemovedNotification,
  type SimulatedNotification,
} from 'nestjs-payouts/testing';
import { AppModule } from './app.module.js';
import { findPostgresBin, type SamplePostgres, startSamplePostgres } from './sample-postgres.js';
import { findRedisServer, type SampleRedis, startSampleRedis } from './sample-redis.js';
import { SampleLogger } from './sample-logger.js';
import { SavedCardsStore } from './saved-cards.store.js';
import { SellerPayoutRun } from './seller-payout-run.js';
import { WalletPayoutsService } from './wallet-payouts.service.js';

/** The sender's 5-minute interval, shortened so that a failing step fails in seconds. */
const DEMO_INTERVAL_MS = 200;
const REDIS_INSTALL = 'on Debian: apt-get install redis-server';
const POSTGRES_INSTALL = 'on Debian: apt-get install postgresql';
const CREDENTIAL_VARIABLES = ['PAYOUTS_BASE_URL', 'PAYOUTS_API_KEY', 'PAYOUTS_ACCESS_TOKEN'] as const;

class StepFailure extends Error {}

let stepCount = 0;

/** Runs one numbered step; a failure names the step and ends the run. */
async function step<T>(title: string, action: () => Promise<T>): Promise<T> {
  stepCount += 1;
  print(`\n${stepCount}. ${title}`);
  try {
    return await action();
  } catch (error) {
    throw new StepFailure(`Step ${stepCount} (${title}) failed: ${(error as Error).message}`, { cause: error });
  }
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

function check(condition: boolean, problem: string): void {
  if (!condition) throw new Error(problem);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      serve: { type: 'boolean', default: false },
      adapter: { type: 'string', default: 'express' },
      prefix: { type: 'string', default: '' },
      queue: { type: 'boolean', default: false },
    },
  });
  const { adapter, prefix } = values;
  if (adapter !== 'express' && adapter !== 'fastify') {
    throw new StepFailure(`--adapter must be express or fastify; got "${adapter}".`);
  }
  const missing = CREDENTIAL_VARIABLES.filter((name) => !process.env[name]);
  if (missing.length > 0 && missing.length < CREDENTIAL_VARIABLES.length) {
    throw new StepFailure(
      `Set all of ${CREDENTIAL_VARIABLES.join(', ')}, or none to use the mock API; missing: ${missing.join(', ')}.`,
    );
  }
  const secretWasGenerated = !process.env.PAYOUTS_NOTIFICATIONS_SECRET;
  process.env.PAYOUTS_NOTIFICATIONS_SECRET ||= randomBytes(16).toString('hex');
  const secret = process.env.PAYOUTS_NOTIFICATIONS_SECRET;

  print('nestjs-payouts sample: a wallet payout, then two payment-method notifications');
  // The run pays 50 sellers: against the mock only, and on a redis-server from the PATH (queue mode needs one anyway).
  const usesMock = missing.length > 0;
  const skipRun = !usesMock
    ? 'the payouts API is a real one and the run pays 50 sellers'
    : findRedisServer()
      ? undefined
      : `no redis-server is on the PATH (${REDIS_INSTALL})`;
  const redis =
    values.queue || skipRun === undefined
      ? await step(values.queue ? 'Redis for queue mode' : 'Redis for a payout run', () => startRedis(values.queue!))
      : undefined;
  // With PostgreSQL too, the run pays through the outbox: each payout written in the app's own transaction.
  const postgresBin = skipRun === undefined ? findPostgresBin() : undefined;
  const postgres = postgresBin
    ? await step('PostgreSQL for the payout ledger', () => startPostgres(postgresBin))
    : undefined;
  const mock = await step('Payouts API', async () => {
    if (missing.length === 0) {
      print(`   Using ${process.env.PAYOUTS_BASE_URL} with the credentials from the environment.`);
      return undefined;
    }
    // The mock API that nestjs-payouts/testing ships, with credentials it makes up for this run.
    const api = await MockPayoutsApi.start();
    Object.assign(process.env, {
      PAYOUTS_BASE_URL: api.baseUrl,
      PAYOUTS_API_KEY: api.apiKey,
      PAYOUTS_ACCESS_TOKEN: api.accessToken,
    });
    print(`   Mock payouts API at ${api.baseUrl}: it checks X-API-Key, Authorization: Bearer <JWT> and the body.`);
    return api;
  });

  const app = await step('Start the Nest app', async () => {
    const httpAdapter = adapter === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
    const module = redis ? AppModule.withPayoutRuns(redis.url, postgres?.pool) : AppModule;
    const nest = await NestFactory.create(module, httpAdapter, { logger: new SampleLogger(values.serve) });
    // The notification route sits under the global prefix, like every route of the app.
    if (prefix) nest.setGlobalPrefix(prefix);
    if (!values.serve) {
      await nest.listen(0, '127.0.0.1');
    } else {
      // By default every interface, so that the payouts service can reach the app (Fastify's default is loopback).
      const host = process.env.HOST ?? (adapter === 'fastify' ? '0.0.0.0' : undefined);
      await (host === undefined
        ? nest.listen(Number(process.env.PORT ?? 3000))
        : nest.listen(Number(process.env.PORT ?? 3000), host));
    }
    print(
      `   ${adapter === 'fastify' ? 'Fastify' : 'Express'} adapter, ${prefix ? `global prefix "${prefix}"` : 'no global prefix'}.`,
    );
    return nest;
  });
  const port = (app.getHttpServer().address() as { port: number }).port;
  const path = `${prefix ? `${prefix.replace(/^\/+|\/+$/g, '')}/` : ''}payouts/notifications`;
  const route = `http://127.0.0.1:${port}/${path}`;
  print(`   Notification route: ${route}?token=<secret>`);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await app.close();
      await mock?.close();
      await redis?.close();
      await postgres?.close();
    })());
  // Ctrl+C (or SIGTERM) stops the app, then the servers the sample started, before the process ends. The sample
  // handles the signal itself: enableShutdownHooks() would end the process once the app is closed, leaving them.
  const stopOnSignal = () => void stop().finally(() => process.exit());
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    await runSteps(app, route, secret, mock, { queued: values.queue!, skipRun, postgres });
  } catch (error) {
    await stop();
    throw error;
  }

  if (!values.serve) {
    await stop();
    print('\nAll steps passed.');
    return;
  }
  print(`\nServing. Register this notification URL: http://<your-host>:${port}/${path}?token=<secret>`);
  if (secretWasGenerated) {
    print(`The secret was generated for this run: ${secret}. Set PAYOUTS_NOTIFICATIONS_SECRET to choose it.`);
  }
  print(`Try: npx nestjs-payouts simulate --url "${route}?token=<secret>" --event added`);
  print('Press Ctrl+C to stop.');
}

/** Queue mode and payout runs need a Redis: the sample starts one of its own, which keeps nothing once stopped. */
async function startRedis(queueMode: boolean): Promise<SampleRedis> {
  const executable = findRedisServer();
  if (!executable) throw new Error(`queue mode needs redis-server on the PATH (${REDIS_INSTALL})`);
  const redis = await startSampleRedis(executable);
  if (queueMode) {
    // The app's queue-mode dispatcher reads it.
    process.env.PAYOUTS_REDIS_URL = redis.url;
    print(
      `   redis-server at ${redis.url}, persistence off: notifications are stored there, then handled by a worker; ` +
        'payout runs queue their payouts there.',
    );
  } else {
    print(`   redis-server at ${redis.url}, persistence off: the payout run queues its payouts there.`);
  }
  return redis;
}

/** The payout ledger's database: a cluster of the sample's own, with the table of the sample's own business rows. */
async function startPostgres(bin: string): Promise<SamplePostgres> {
  const postgres = await startSamplePostgres(bin);
  await postgres.pool.query(
    'CREATE TABLE seller_payouts (request_id text PRIMARY KEY, seller text NOT NULL, amount numeric NOT NULL)',
  );
  print(
    `   PostgreSQL in ${postgres.dir}, on a Unix socket only: the payout ledger, and the app's table seller_payouts.`,
  );
  return postgres;
}

/** In queue mode the acknowledgement means "stored": the handler runs on the worker a moment later. */
async function handled(condition: () => boolean, queued: boolean): Promise<boolean> {
  const deadline = Date.now() + (queued ? 10_000 : 0);
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (queued) print('   The worker ran the handler after the acknowledgement.');
  return true;
}

async function runSteps(
  app: INestApplication,
  route: string,
  secret: string,
  mock: MockPayoutsApi | undefined,
  { queued, skipRun, postgres }: { queued: boolean; skipRun: string | undefined; postgres: SamplePostgres | undefined },
) {
  const savedCards = app.get(SavedCardsStore);

  await step('Create a wallet payout with PayoutsService.createPayout()', async () => {
    const result = await app.get(WalletPayoutsService).payOut({
      name: 'Jane Doe',
      phoneNumber: '254700000001',
      amount: '125.50',
      currency: 'KES',
      country: 'KE',
      reference: 'seller-earnings-2030-05',
    });
    print(`   Payouts API replied HTTP ${result.status}: ${JSON.stringify(result.body)}`);
    if (mock) {
      check(mock.calls.length === 1, `the mock API received ${mock.calls.length} requests, expected 1`);
      print('   The mock API accepted both credential headers and every field of the body.');
    }
  });

  if (skipRun === undefined && postgres) {
    await step("Pay 50 sellers through the outbox, inside the app's own transaction (nestjs-payouts/postgres)", () =>
      paySellersInTransactions(app, mock, postgres.pool),
    );
  } else if (skipRun === undefined) {
    await step('Pay 50 sellers in one payout run (nestjs-payouts/payout-runs)', () => paySellers(app, mock));
    print(`\nSkipped: paying through the outbox, as PostgreSQL is not installed (${POSTGRES_INSTALL}).`);
  } else {
    print(`\nSkipped: paying 50 sellers in one payout run, as ${skipRun}.`);
  }

  const added = paymentMethodAddedNotification();
  await step('Deliver PAYMENT_METHOD_ADDED through the simulator', async () => {
    const report = await deliverToApp(`${route}?token=${secret}`, added);
    check(report.delivered, 'the app did not acknowledge the notification');
    const saved = () =>
      savedCards.cardsOf(added.shopper.id).some((card) => card.paymentMethodId === added.paymentMethod.id);
    check(await handled(saved, queued), 'the onAdded handler did not save the card');
    const cards = savedCards.cardsOf(added.shopper.id);
    print(
      `   Saved cards of ${added.shopper.id}: ${cards.map((card) => `${card.paymentMethodId} ending ${card.lastFour}`).join(', ')}`,
    );
  });

  await step('Deliver PAYMENT_METHOD_REMOVED through the simulator', async () => {
    const removed = paymentMethodRemovedNotification();
    const report = await deliverToApp(`${route}?token=${secret}`, removed);
    check(report.delivered, 'the app did not acknowledge the notification');
    const removedCard = () => savedCards.cardsOf(removed.shopper.id).length === 0;
    check(await handled(removedCard, queued), 'the onRemoved handler did not remove the card');
    print(`   Saved cards of ${removed.shopper.id}: none`);
  });

  await step('Deliver a notification with a wrong token (2 attempts)', async () => {
    const report = await deliverToApp(`${route}?token=wrong-token`, paymentMethodAddedNotification(), 2);
    check(!report.delivered, 'the app acknowledged a notification with a wrong token');
    check(
      report.attempts.every((attempt) => attempt.status === 401),
      'the app did not reply 401 to a wrong token',
    );
    check(savedCards.cardsOf(added.shopper.id).length === 0, 'a handler ran for a notification with a wrong token');
    print("   Refused, and no handler ran. The real sender would alert the merchant's technical contact now.");
  });
}

/** 50 payouts queued at once, sent by the worker within the limit, each once; the same run again adds nothing. */
async function paySellers(app: INestApplication, mock: MockPayoutsApi | undefined): Promise<void> {
  const run = app.get(SellerPayoutRun);
  const before = mock?.calls.length ?? 0;
  const enqueued = await run.payAll('sellers-2030-05', 50);
  print(`   Queued ${enqueued.queued} payouts in run ${enqueued.runId}; the worker sends them, 100 a second at most.`);
  const deadline = Date.now() + 20_000;
  while (run.summary === undefined || run.paid.size < 50) {
    if (Date.now() >= deadline) throw new Error(`only ${run.paid.size} of 50 payouts were sent within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const again = await run.payAll('sellers-2030-05', 50);
  check(again.alreadyQueued === 50 && again.queued === 0, 'enqueueing the run again added payouts');
  print('   The sent handler saw all 50; enqueueing the run again added nothing (one job per request_id).');
  if (mock) {
    const sent = mock.calls.length - before;
    check(sent === 50, `the mock API received ${sent} payouts of the run, expected 50`);
    print('   The mock API received each payout once.');
  }
}

/**
 * Two transactions of the app, each writing its business rows and their payouts: one for a seller whose payout is
 * cancelled (rolled back), then the 50 sellers of the month (committed). The relay queues the committed payouts; the
 * rolled-back one never existed, and is not paid.
 */
async function paySellersInTransactions(
  app: INestApplication,
  mock: MockPayoutsApi | undefined,
  pool: SamplePostgres['pool'],
): Promise<void> {
  const run = app.get(SellerPayoutRun);
  const runId = 'sellers-2030-05';
  const before = mock?.calls.length ?? 0;
  const payouts = run.payouts(runId, 51);
  const cancelled = payouts[50]!.request_id;
  const inTransaction = async (batch: typeof payouts, outcome: 'COMMIT' | 'ROLLBACK') => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const payout of batch) {
        await client.query('INSERT INTO seller_payouts (request_id, seller, amount) VALUES ($1, $2, $3)', [
          payout.request_id,
          payout.payout_method.beneficiary.name,
          payout.amount.value,
        ]);
      }
      const { pending } = await run.payInTransaction(runId, batch, client);
      await client.query(outcome);
      return pending;
    } finally {
      client.release();
    }
  };
  const pending =
    (await inTransaction(payouts.slice(50), 'ROLLBACK')) + (await inTransaction(payouts.slice(0, 50), 'COMMIT'));
  check(pending === 51, `${pending} of 51 payouts were written as pending`);
  print(
    `   A transaction wrote ${cancelled} and its seller_payouts row, then rolled back; another wrote the 50 ` +
      'sellers of the month and their rows, as pending payouts, and committed.',
  );
  const deadline = Date.now() + 20_000;
  while (run.summary === undefined || run.paid.size < 50) {
    if (Date.now() >= deadline) throw new Error(`only ${run.paid.size} of 50 payouts were sent within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  print('   The relay queued each committed payout once its transaction committed; the sent handler saw all 50.');
  const { rows } = await pool.query<{ state: string; n: number }>(
    'SELECT state, count(*)::integer AS n FROM nestjs_payouts.payouts WHERE run_id = $1 GROUP BY state',
    [runId],
  );
  check(rows.length === 1 && rows[0]!.state === 'sent' && rows[0]!.n === 50, 'the ledger does not say 50 sent');
  check(!run.paid.has(cancelled), `${cancelled} was paid, though its transaction rolled back`);
  print(`   Not paid: ${cancelled}, whose transaction rolled back: its payout never existed.`);
  print('   The ledger (nestjs_payouts.payouts) holds the 50, each sent.');
  if (mock) {
    const sent = mock.calls.length - before;
    check(sent === 50, `the mock API received ${sent} payouts of the run, expected 50`);
    check(mock.callsFor(cancelled).length === 0, `the mock API received ${cancelled}`);
    print('   The mock API received each committed payout once, and never the rolled-back one.');
  }
}

async function deliverToApp(
  url: string,
  notification: SimulatedNotification,
  attempts?: number,
): Promise<DeliveryReport> {
  const report = await deliver(url, notification, { attempts, intervalMs: DEMO_INTERVAL_MS });
  for (const attempt of report.attempts) {
    const reply = attempt.status === undefined ? 'no reply' : `HTTP ${attempt.status} ${attempt.body}`;
    print(
      `   Sender, attempt ${attempt.attempt}: ${reply} -> ${attempt.acknowledged ? 'acknowledged' : 'not acknowledged'}`,
    );
  }
  return report;
}

main().catch((error: unknown) => {
  process.stderr.write(`\n${error instanceof StepFailure ? error.message : (error as Error).stack}\n`);
  process.exitCode = 1;
});
