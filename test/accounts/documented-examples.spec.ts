// The "Several merchant accounts" examples of the README, run for real against payouts API stubs.
import { Injectable, type INestApplication, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  getPayoutsServiceToken,
  InjectPayouts,
  type PayoutResult,
  PayoutsModule,
  PayoutsService,
} from 'nestjs-payouts';
import { FakePayoutsService } from 'nestjs-payouts/testing';
import { PayoutsApiStub } from '../payouts/payouts-api-stub.js';

@Injectable()
class SellerPayouts {
  constructor(
    @InjectPayouts('eu') private readonly eu: PayoutsService,
    @InjectPayouts('ke') private readonly ke: PayoutsService,
  ) {}

  payOut(country: string, phoneNumber: string, amount: string, requestId: string): Promise<PayoutResult> {
    const kenya = country === 'KE';
    return (kenya ? this.ke : this.eu).createPayout({
      payout_method: {
        type: 'wallet',
        payment_method: kenya ? 'mpesa_ke' : 'paypal',
        beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: phoneNumber } },
      },
      amount: { value: amount, currency_code: kenya ? 'KES' : 'EUR' },
      country_code: country,
      purpose: 'seller_earnings',
      reference: `earnings ${requestId}`,
      request_id: requestId,
    });
  }
}

@Injectable()
class EuBonuses {
  constructor(@InjectPayouts('eu') private readonly eu: PayoutsService) {}

  async pay(phoneNumber: string): Promise<void> {
    await this.eu.createPayout({
      payout_method: {
        type: 'wallet',
        payment_method: 'paypal',
        beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: phoneNumber } },
      },
      amount: { value: '10.00', currency_code: 'EUR' },
      country_code: 'DE',
      purpose: 'bonus',
      reference: 'bonus-2030-05',
      request_id: 'bonus-2030-05-0001',
    });
  }
}

describe('README: several merchant accounts', () => {
  let euApi: PayoutsApiStub;
  let keApi: PayoutsApiStub;
  let app: INestApplication | undefined;

  beforeEach(async () => {
    [euApi, keApi] = await Promise.all([PayoutsApiStub.start(), PayoutsApiStub.start()]);
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
    await Promise.all([euApi.close(), keApi.close()]);
  });

  it("pays each seller from the account of the seller's country", async () => {
    // The README's AppModule, with the stubs' addresses and test credentials in place of the environment's.
    @Module({
      imports: [
        ConfigModule.forRoot({
          ignoreEnvFile: true,
          load: [
            () => ({
              KE_PAYOUTS_BASE_URL: keApi.baseUrl,
              KE_PAYOUTS_API_KEY: 'ke-api-key',
              KE_PAYOUTS_ACCESS_TOKEN: 'ke-access-token',
              KE_NOTIFICATIONS_SECRET: 'ke-secret',
            }),
          ],
        }),
        PayoutsModule.forRoot({
          name: 'eu',
          baseUrl: euApi.baseUrl,
          apiKey: 'eu-api-key',
          accessToken: 'eu-access-token',
          notifications: { path: 'payouts/eu/notifications', verification: { secret: { value: 'eu-secret' } } },
        }),
        PayoutsModule.forRootAsync({
          name: 'ke',
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({
            baseUrl: config.getOrThrow<string>('KE_PAYOUTS_BASE_URL'),
            apiKey: config.getOrThrow<string>('KE_PAYOUTS_API_KEY'),
            accessToken: config.getOrThrow<string>('KE_PAYOUTS_ACCESS_TOKEN'),
            notifications: {
              path: 'payouts/ke/notifications',
              verification: { secret: { value: config.getOrThrow<string>('KE_NOTIFICATIONS_SECRET') } },
            },
          }),
        }),
      ],
      providers: [SellerPayouts],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    await app.listen(0, '127.0.0.1');

    await app.get(SellerPayouts).payOut('KE', '254712345678', '1500.00', 'req-ke-1');
    await app.get(SellerPayouts).payOut('DE', '4915112345678', '125.50', 'req-de-1');

    const sent = (api: PayoutsApiStub) =>
      api.requests.map((request) => {
        const body = JSON.parse(request.body) as { amount: { currency_code: string }; request_id: string };
        return [request.headers['x-api-key'], body.amount.currency_code, body.request_id];
      });
    expect(sent(keApi)).toEqual([['ke-api-key', 'KES', 'req-ke-1']]);
    expect(sent(euApi)).toEqual([['eu-api-key', 'EUR', 'req-de-1']]);
  });

  it("replaces the 'eu' account's service in a testing module", async () => {
    const eu = new FakePayoutsService();
    const moduleRef = await Test.createTestingModule({
      imports: [
        PayoutsModule.forRoot({
          name: 'eu',
          baseUrl: euApi.baseUrl,
          apiKey: 'test-api-key',
          accessToken: 'test-access-token',
          notifications: false,
        }),
      ],
      providers: [EuBonuses],
    })
      .overrideProvider(getPayoutsServiceToken('eu'))
      .useValue(eu)
      .compile();

    await moduleRef.get(EuBonuses).pay('4915112345678');

    expect(eu.requests.map((request) => request.request_id)).toEqual(['bonus-2030-05-0001']);
    expect(euApi.requests).toEqual([]);
    await moduleRef.close();
  });
});
