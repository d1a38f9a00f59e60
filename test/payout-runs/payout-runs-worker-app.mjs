// A worker-only instance of a merchant app that sends payout runs, run as its own process by the payout-runs specs.
// Plain JavaScript on the built package, loaded by name as an application does.
//   node payout-runs-worker-app.mjs --base-url=… --prefix=… (--redis-port=… | --cluster-ports=p1,p2,p3)
//     [--max=…] [--duration-ms=…] [--concurrency=…] [--lock-ms=…] [--runs-first] [--runs-account=…]
//     [--database-url=…] [--shutdown-timeout-ms=…]
// --runs-first imports PayoutRunsModule before PayoutsModule; --runs-account names an account of its own;
// --database-url keeps the runs' ledger in PostgreSQL (nestjs-payouts/postgres), whose schema must exist.
// Prints `ready`, then `sent <request_id>`, `refused <request_id>`, `unknown <request_id>` for each result handler
// call, `completed <run id>` for the end of a run, `error <message>` for each error the app logs, and
// `bootstrap-failed <message>` when the app cannot start, after which the process ends by itself.
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { PayoutsModule } from 'nestjs-payouts';
import {
  OnPayoutOutcomeUnknown,
  OnPayoutRefused,
  OnPayoutRunCompleted,
  OnPayoutSent,
  PayoutRunsModule,
} from 'nestjs-payouts/payout-runs';
import { startChildApp } from '../support/child-app.mjs';

const { values: options } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    prefix: { type: 'string' },
    'redis-port': { type: 'string' },
    'cluster-ports': { type: 'string' },
    max: { type: 'string', default: '200' },
    'duration-ms': { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '10' },
    'lock-ms': { type: 'string', default: '2000' },
    'runs-first': { type: 'boolean', default: false },
    'runs-account': { type: 'string' },
    'database-url': { type: 'string' },
    'shutdown-timeout-ms': { type: 'string' },
  },
});

class Results {
  sent(result) {
    console.log(`sent ${result.requestId}`);
  }
  refused(result) {
    console.log(`refused ${result.requestId}`);
  }
  unknown(result) {
    console.log(`unknown ${result.requestId}`);
  }
  completed(summary) {
    console.log(`completed ${summary.runId}`);
  }
}
Reflect.decorate([Injectable()], Results);
for (const [method, decorator] of [
  ['sent', OnPayoutSent()],
  ['refused', OnPayoutRefused()],
  ['unknown', OnPayoutOutcomeUnknown()],
  ['completed', OnPayoutRunCompleted()],
]) {
  Reflect.decorate([decorator], Results.prototype, method, Object.getOwnPropertyDescriptor(Results.prototype, method));
}

const connection = options['cluster-ports']
  ? new Cluster(
      options['cluster-ports'].split(',').map((port) => ({ host: '127.0.0.1', port: Number(port) })),
      { redisOptions: { maxRetriesPerRequest: null } },
    )
  : { host: '127.0.0.1', port: Number(options['redis-port']) };

const payoutsModule = PayoutsModule.forRoot({
  baseUrl: options['base-url'],
  apiKey: 'runs-worker-api-key',
  accessToken: 'runs-worker-access-token',
  timeoutMs: 5000,
  notifications: false,
});
const runsModule = PayoutRunsModule.forRoot({
  ...(options['runs-account'] !== undefined && { account: options['runs-account'] }),
  connection,
  prefix: options.prefix,
  rateLimit: { max: Number(options.max), durationMs: Number(options['duration-ms']) },
  concurrency: Number(options.concurrency),
  lockDurationMs: Number(options['lock-ms']),
  attempts: 3,
  backoffMs: 50,
  ...(options['database-url'] !== undefined && { ledger: await postgresLedger(options['database-url']) }),
  ...(options['shutdown-timeout-ms'] !== undefined && { shutdownTimeoutMs: Number(options['shutdown-timeout-ms']) }),
});

/** The PostgreSQL ledger, loaded only when asked for, so that the other specs need neither pg nor its entry point. */
async function postgresLedger(connectionString) {
  const [{ default: pg }, { payoutLedgerPostgres }] = await Promise.all([
    import('pg'),
    import('nestjs-payouts/postgres'),
  ]);
  const pool = new pg.Pool({ connectionString, max: 20 });
  pool.on('error', () => undefined);
  return payoutLedgerPostgres({ pool });
}

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: options['runs-first'] ? [runsModule, payoutsModule] : [payoutsModule, runsModule],
      providers: [Results],
    }),
  ],
  AppModule,
);

await startChildApp(AppModule);
