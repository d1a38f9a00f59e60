// A worker instance of a merchant app whose payout runs reconcile unknown outcomes, run as its own process by the
// reconcile specs. Plain JavaScript on the built package, loaded by name as an application does.
//   node payout-reconcile-app.mjs --base-url=… --prefix=… --redis-port=… --api-key=… --access-token=…
// Prints `ready`, then `lookup <request_id>` for each call of the lookup, `sent <request_id>` for each sent handler
// call, `log <message>` for each log line of the payout runs, and `error <message>` for each error the app logs.
import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PayoutsApiError, PayoutsModule } from 'nestjs-payouts';
import { OnPayoutSent, PayoutRunsModule } from 'nestjs-payouts/payout-runs';

const { values: options } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    prefix: { type: 'string' },
    'redis-port': { type: 'string' },
    'api-key': { type: 'string' },
    'access-token': { type: 'string' },
  },
});

class Results {
  sent(result) {
    console.log(`sent ${result.requestId}`);
  }
}
Reflect.decorate([Injectable()], Results);
Reflect.decorate(
  [OnPayoutSent()],
  Results.prototype,
  'sent',
  Object.getOwnPropertyDescriptor(Results.prototype, 'sent'),
);

/** The mock's status endpoint, slow enough that the two instances' sweeps are due while one runs. */
async function lookup(request, { payouts }) {
  console.log(`lookup ${request.request_id}`);
  await sleep(20);
  try {
    await payouts.request({ method: 'GET', path: '/payouts/{id}', params: { id: request.request_id } });
    return 'created';
  } catch (error) {
    if (error instanceof PayoutsApiError && error.status === 404) return 'absent';
    throw error;
  }
}

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: options['base-url'],
          apiKey: options['api-key'],
          accessToken: options['access-token'],
          timeoutMs: 5000,
          notifications: false,
        }),
        PayoutRunsModule.forRoot({
          connection: { host: '127.0.0.1', port: Number(options['redis-port']) },
          prefix: options.prefix,
          rateLimit: false,
          attempts: 3,
          backoffMs: 50,
          reconcile: { lookup, settleAfterMs: 0, sweepEveryMs: 100 },
        }),
      ],
      providers: [Results],
    }),
  ],
  AppModule,
);

const line = (kind) => (message) => console.log(`${kind} ${String(message).split('\n')[0]}`);
const logger = {
  log: line('log'),
  warn: line('log'),
  debug() {},
  verbose() {},
  error: line('error'),
  fatal: line('error'),
};
const app = await NestFactory.createApplicationContext(AppModule, { logger });
app.enableShutdownHooks();
console.log('ready');
