import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { OnPaymentMethodAdded, PaymentMethodNotification, PayoutsModule } from 'nestjs-payouts';
import { NOTIFICATION_PATH, NOTIFICATION_SECRET } from '../notification-sample.js';
import { dedupeStoreFromArgs } from './dedupe-store-args.js';
import { serveNestApp } from './nest-server.js';

/**
 * 4. This package's route: secret verification, validation, one handler, and the default dedupe store, or with
 * `--store=node-redis|ioredis --redis-url=…` the Redis store shared by several instances.
 */
@Injectable()
class CardEvents {
  @OnPaymentMethodAdded()
  async added(_notification: PaymentMethodNotification): Promise<void> {}
}

const store = await dedupeStoreFromArgs();

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
      },
    }),
  ],
  providers: [CardEvents],
})
class AppModule {}

await serveNestApp(AppModule);
