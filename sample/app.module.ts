import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { PayoutsModule } from 'nestjs-payouts';
import { PaymentMethodsListener } from './payment-methods.listener.js';
import { SavedCardsStore } from './saved-cards.store.js';
import { WalletPayoutsService } from './wallet-payouts.service.js';

@Module({
  imports: [
    ConfigModule.forRoot(),
    PayoutsModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        baseUrl: config.getOrThrow<string>('PAYOUTS_BASE_URL'),
        apiKey: config.getOrThrow<string>('PAYOUTS_API_KEY'),
        accessToken: config.getOrThrow<string>('PAYOUTS_ACCESS_TOKEN'),
        notifications: {
          path: 'payouts/notifications',
          // The notification URL you register carries this secret: .../payouts/notifications?token=<secret>
          verification: { secret: { value: config.getOrThrow<string>('PAYOUTS_NOTIFICATIONS_SECRET') } },
        },
      }),
    }),
  ],
  providers: [SavedCardsStore, PaymentMethodsListener, WalletPayoutsService],
})
export class AppModule {}
