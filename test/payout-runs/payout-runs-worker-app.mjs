// A worker-only instance of a merchant app that sends payout runs, run as its own process by the payout-runs specs.
// Plain JavaScript on the built package, loaded by name as an application does.
//   node payout-runs-worker-app.mjs --base-url=… --prefix=… (--redis-port=… | --cluster-ports=p1,p2,p3)
//     [--max=…] [--duration-ms=…] [--concurrency=…] [--lock-ms=…]
// Prints `ready`, then `sent <request_id>`, `refused <request_id>`, `unknown <request_id>` for each result handler
// call, `completed <run id>` for the end of a run, and `error <message>` for each error the app logs.
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cluster } from 'ioredis';
import { PayoutsModule } from 'nestjs-payouts';
import {
  OnPayoutOutcomeUnknown,
  OnPayoutRefused,
  OnPayoutRunCompleted,
  OnPayoutSent,
  PayoutRunsModule,
} from 'nestjs-payouts/payout-runs';

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

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: options['base-url'],
          apiKey: 'runs-worker-api-key',
          accessToken: 'runs-worker-access-token',
          timeoutMs: 5000,
          notifications: false,
        }),
        PayoutRunsModule.forRoot({
          connection,
          prefix: options.prefix,
          rateLimit: { max: Number(options.max), durationMs: Number(options['duration-ms']) },
          concurrency: Number(options.concurrency),
          lockDurationMs: Number(options['lock-ms']),
          attempts: 3,
          backoffMs: 50,
        }),
      ],
      providers: [Results],
    }),
  ],
  AppModule,
);

const logger = {
  log() {},
  warn() {},
  debug() {},
  verbose() {},
  error: (message) => console.log(`error ${String(message).split('\n')[0]}`),
  fatal: (message) => console.log(`error ${String(message).split('\n')[0]}`),
};
const app = await NestFactory.createApplicationContext(AppModule, { logger });
app.enableShutdownHooks();
console.log('ready');
