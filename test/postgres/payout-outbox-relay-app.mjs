// An instance of a merchant app whose payout runs keep their ledger in PostgreSQL, run as its own process by the
// outbox specs: it runs a worker, and with it the relay that moves committed pending payouts to the queue.
// Plain JavaScript on the built package, loaded by name as an application does.
//   node payout-outbox-relay-app.mjs --base-url=… --prefix=… --redis-port=… --database-url=… --name=…
// --name is the pool's application_name, by which the spec finds this process's connections in pg_stat_activity.
// Prints `ready`, then `sent <request_id>` and `unknown <request_id>` for each result handler call, and
// `error <message>` for each error the app logs.
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import pg from 'pg';
import { PayoutsModule } from 'nestjs-payouts';
import { OnPayoutOutcomeUnknown, OnPayoutSent, PayoutRunsModule } from 'nestjs-payouts/payout-runs';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { startChildApp } from '../support/child-app.mjs';

const { values: options } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    prefix: { type: 'string' },
    'redis-port': { type: 'string' },
    'database-url': { type: 'string' },
    name: { type: 'string' },
  },
});

class Results {
  sent(result) {
    console.log(`sent ${result.requestId}`);
  }
  unknown(result) {
    console.log(`unknown ${result.requestId}`);
  }
}
Reflect.decorate([Injectable()], Results);
for (const [method, decorator] of [
  ['sent', OnPayoutSent()],
  ['unknown', OnPayoutOutcomeUnknown()],
]) {
  Reflect.decorate([decorator], Results.prototype, method, Object.getOwnPropertyDescriptor(Results.prototype, method));
}

const pool = new pg.Pool({ connectionString: options['database-url'], application_name: options.name, max: 20 });
pool.on('error', () => undefined);

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: options['base-url'],
          apiKey: 'outbox-relay-api-key',
          accessToken: 'outbox-relay-access-token',
          timeoutMs: 5000,
          notifications: false,
        }),
        PayoutRunsModule.forRoot({
          connection: { host: '127.0.0.1', port: Number(options['redis-port']) },
          prefix: options.prefix,
          rateLimit: false,
          concurrency: 20,
          attempts: 3,
          backoffMs: 50,
          ledger: payoutLedgerPostgres({ pool }),
        }),
      ],
      providers: [Results],
    }),
  ],
  AppModule,
);

if (!(await startChildApp(AppModule))) await pool.end();
