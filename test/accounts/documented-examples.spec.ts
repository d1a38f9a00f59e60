// The examples of docs/accounts.md, run for real against mock payouts APIs.
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
import { FakePayoutsService, MockPayoutsApi } from 'nestjs-payouts/testing';

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

describe('docs/accounts.md: several merchant accounts', () => {
  let euApi: MockPayoutsApi;
  let keApi: MockPayoutsApi;
  let app: INestApplication | undefined;

  beforeEach(async () => {
    // Each accepts only its account's credentials.
    [euApi, keApi] = await Promise.all([
      MockPayoutsApi.start({ apiKey: 'eu-api-key', accessToken: 'eu-access-token' }),
      MockPayoutsApi.start({ apiKey: 'ke-api-key', accessToken: 'ke-access-token' }),
    ]);
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
    await Promise.all([euApi.close(), keApi.close()]);
  });

  it("pays each seller from the account of the seller's country", async () => {
    // The guide's AppModule, with the mocks' addresses and test credentials in place of the environment's.
    @Module({
      imports: [
        ConfigModule.forRoot({
          ignoreEnvFile: true,
          load: [
            () => ({
              KE_PAYOUTS_BASE_URL: keApi.baseUrl,
              KE_PAYOUTS_API_KEY: 'ke-api-key',
              KE_PAYOUTS_ACCESS_TOKEN: 'ke-access-token',
              KE_PAYOUTS_NOTIFICATIONS_SECRET: 'ke-secret',
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
              verification: { secret: { value: config.getOrThrow<string>('KE_PAYOUTS_NOTIFICATIONS_SECRET') } },
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

    const sent = (api: MockPayoutsApi) =>
      api.calls.map((call) => {
        const body = call.body as { amount: { currency_code: string } };
        return [call.credentials, call.status, body.amount.currency_code, call.requestId];
      });
    const valid = { apiKey: 'valid', accessToken: 'valid' };
    expect(sent(keApi)).toEqual([[valid, 201, 'KES', 'req-ke-1']]);
    expect(sent(euApi)).toEqual([[valid, 201, 'EUR', 'req-de-1']]);
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
    expect(euApi.calls).toEqual([]);
    await moduleRef.close();
  });
});
