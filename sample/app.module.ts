import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { PayoutsModule } from 'nestjs-payouts';
import { PayoutRunsModule } from 'nestjs-payouts/payout-runs';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { payoutsQueue } from 'nestjs-payouts/queue';
import type { Pool } from 'pg';
import { PaymentMethodsListener } from './payment-methods.listener.js';
import { SavedCardsStore } from './saved-cards.store.js';
import { SellerPayoutRun } from './seller-payout-run.js';
import { WalletPayoutsService } from './wallet-payouts.service.js';

@Module({
  imports: [
    ConfigModule.forRoot(),
    PayoutsModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => {
        // Queue mode when a Redis URL is set: notifications are stored, acknowledged, then handled by a worker.
        const redisUrl = config.get<string>('PAYOUTS_REDIS_URL');
        return {
          baseUrl: config.getOrThrow<string>('PAYOUTS_BASE_URL'),
          apiKey: config.getOrThrow<string>('PAYOUTS_API_KEY'),
          accessToken: config.getOrThrow<string>('PAYOUTS_ACCESS_TOKEN'),
          notifications: {
            path: 'payouts/notifications',
            // The notification URL you register carries this secret: .../payouts/notifications?token=<secret>
            verification: { secret: { value: config.getOrThrow<string>('PAYOUTS_NOTIFICATIONS_SECRET') } },
            ...(redisUrl && {
              dispatcher: payoutsQueue({
                connection: { host: new URL(redisUrl).hostname, port: Number(new URL(redisUrl).port || 6379) },
                backoffMs: 200,
              }),
            }),
          },
        };
      },
    }),
  ],
  providers: [SavedCardsStore, PaymentMethodsListener, WalletPayoutsService],
})
export class AppModule {
  /**
   * The app with payout runs on the Redis at `redisUrl`; with `pool`, their ledger in that PostgreSQL database, which
   * lets the app enqueue payouts inside its own transactions.
   */
  static withPayoutRuns(redisUrl: string, pool?: Pool): DynamicModule {
    const { hostname, port } = new URL(redisUrl);
    return {
      module: AppModule,
      imports: [
        PayoutRunsModule.forRoot({
          connection: { host: hostname, port: Number(port || 6379) },
          // What the provider allows; the mock allows anything, a real one says so in its documentation.
          rateLimit: { max: 100, durationMs: 1000 },
          // The sample creates the ledger's tables at boot; in production, run npx nestjs-payouts postgres migrate.
          ...(pool && { ledger: payoutLedgerPostgres({ pool, migrate: true }) }),
        }),
      ],
      providers: [SellerPayoutRun],
    };
  }
}
