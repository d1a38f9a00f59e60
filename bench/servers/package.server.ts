import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import {
  type NotificationContext,
  OnPaymentMethodAdded,
  PaymentMethodNotification,
  PayoutsModule,
} from 'nestjs-payouts';
import { NOTIFICATION_PATH, NOTIFICATION_SECRET } from '../notification-sample.js';
import type { HandlerDelays } from '../protocol.js';
import { dedupeStoreFromArgs } from './dedupe-store-args.js';
import { serveNestApp } from './nest-server.js';
import { telemetryModeFromArgs, telemetryOption, telemetryProviders } from './telemetry-args.js';
import { argValue } from '../command-line.js';

/**
 * 4. This package's route: secret verification, validation, one handler, and the default dedupe store (with
 * `--max-entries=N`, one that keeps at most N keys), or with `--store=node-redis|ioredis --redis-url=…` the Redis
 * store shared by several instances, or with `--queue=web|both --redis-url=…` queue mode, storing only or also
 * running a worker. With `--delays` the handler records how long after its receipt by the route each notification
 * reached it; `--telemetry=…` as `telemetry-args.ts` says.
 */
const recordDelays = process.argv.includes('--delays');
const delays: number[] = [];

@Injectable()
class CardEvents {
  @OnPaymentMethodAdded()
  async added(_notification: PaymentMethodNotification, context: NotificationContext): Promise<void> {
    if (recordDelays) delays.push(Date.now() - context.receivedAt.getTime());
  }
}

const store = await dedupeStoreFromArgs();
const queue = argValue('queue');
const redisUrl = argValue('redis-url');
if (queue !== undefined && (!redisUrl || (queue !== 'web' && queue !== 'both'))) {
  throw new Error('expected --queue=web|both with --redis-url=redis://…');
}
const telemetry = telemetryModeFromArgs();
// Queue mode's module (with BullMQ and ioredis) and telemetry's are loaded only when asked for, as an application
// without them never loads them: cold start measures the package as most applications use it.
const payoutsQueue = queue === undefined ? undefined : (await import('nestjs-payouts/queue')).payoutsQueue;
const telemetryModuleOption = await telemetryOption(telemetry);

@Module({
  imports: [
    PayoutsModule.forRoot({
      // No payout is sent by this server; the client has its own benchmark.
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'bench-api-key',
      accessToken: 'bench-access-token',
      notifications: {
        path: NOTIFICATION_PATH,
        verification: { secret: { value: NOTIFICATION_SECRET } },
        ...(store && { dedupe: { store } }),
        ...(payoutsQueue && {
          dispatcher: payoutsQueue({
            connection: { host: new URL(redisUrl!).hostname, port: Number(new URL(redisUrl!).port) },
            queueName: `bench-${argValue('adapter')}-${queue}`,
            worker: queue === 'both',
            // The bench's jobs need not outlive it: completed ones go a second after.
            retentionMs: 1000,
          }),
        }),
      },
      ...telemetryModuleOption,
    }),
  ],
  providers: [CardEvents, ...telemetryProviders(telemetry)],
})
class AppModule {}

await serveNestApp(AppModule, {
  /** The delays recorded since the last call, then forgets them. */
  delays: (): HandlerDelays => ({ delaysMs: delays.splice(0) }),
});
