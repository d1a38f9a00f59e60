import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { OnPaymentMethodAdded, PaymentMethodNotification, PayoutsModule } from 'nestjs-payouts';
import { NOTIFICATION_PATH, NOTIFICATION_SECRET } from '../notification-sample.js';
import { serveNestApp } from './nest-server.js';

/** 4. This package's route: secret verification, validation, the default dedupe store and one handler. */
@Injectable()
class CardEvents {
  @OnPaymentMethodAdded()
  async added(_notification: PaymentMethodNotification): Promise<void> {}
}

@Module({
  imports: [
    PayoutsModule.forRoot({
      // No payout is sent by this server; the client has its own benchmark.
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'bench-api-key',
      accessToken: 'bench-access-token',
      notifications: { path: NOTIFICATION_PATH, verification: { secret: { value: NOTIFICATION_SECRET } } },
    }),
  ],
  providers: [CardEvents],
})
class AppModule {}

await serveNestApp(AppModule);
