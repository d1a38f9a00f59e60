// The examples of docs/testing.md, run for real (imports point at the sources instead of the package name).
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError, PayoutsModule, PayoutsService } from 'nestjs-payouts';
import type { NotificationContext } from 'nestjs-payouts';
import { OnPaymentMethodAdded } from 'nestjs-payouts';
import type { PaymentMethodNotification } from 'nestjs-payouts';
import {
  deliver,
  FakePayoutsService,
  MockFault,
  MockPayoutsApi,
  notificationHandlerArgs,
  paymentMethodAddedNotification,
} from 'nestjs-payouts/testing';

@Injectable()
class SellerPayouts {
  constructor(private readonly payouts: PayoutsService) {}

  async payOut(phoneNumber: string, amount: string): Promise<string> {
    const result = await this.payouts.createPayout({
      payout_method: {
        type: 'wallet',
        payment_method: 'mpesa',
        beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: phoneNumber } },
      },
      amount: { value: amount, currency_code: 'KES' },
      country_code: 'KE',
      purpose: 'seller_earnings',
      reference: 'earnings-2030-05',
      request_id: 'req-2030-05-0001',
    });
    return String(result.body.id);
  }
}

@Injectable()
class CardsListener {
  readonly saved: { paymentMethodId: string; receivedAt: Date }[] = [];

  @OnPaymentMethodAdded()
  onAdded(notification: PaymentMethodNotification, context: NotificationContext): void {
    this.saved.push({ paymentMethodId: notification.paymentMethod.id, receivedAt: context.receivedAt });
  }
}

describe('docs/testing.md examples', () => {
  it('replaces PayoutsService with FakePayoutsService', async () => {
    const payouts = new FakePayoutsService().resolveNext({ status: 201, body: { id: 'po_123' } });
    const moduleRef = await Test.createTestingModule({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: 'https://payouts.example.com',
          apiKey: 'test-api-key',
          accessToken: 'test-access-token',
          notifications: false,
        }),
      ],
      providers: [SellerPayouts],
    })
      .overrideProvider(PayoutsService)
      .useValue(payouts)
      .compile();

    await expect(moduleRef.get(SellerPayouts).payOut('254700000001', '125.50')).resolves.toBe('po_123');
    expect(payouts.requests).toHaveLength(1);
    expect(payouts.requests[0]).toMatchObject({ amount: { value: '125.50', currency_code: 'KES' } });
    await moduleRef.close();
  });

  it('unit-tests a handler with notificationHandlerArgs', () => {
    const listener = new CardsListener();

    listener.onAdded(...notificationHandlerArgs(paymentMethodAddedNotification({ paymentMethod: { id: 'pmt_42' } })));

    expect(listener.saved.map((card) => card.paymentMethodId)).toEqual(['pmt_42']);
  });

  it('delivers a notification to the real route of a testing app', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: 'https://payouts.example.com',
          apiKey: 'test-api-key',
          accessToken: 'test-access-token',
          notifications: { verification: { secret: { value: 'test-secret' } } },
        }),
      ],
      providers: [CardsListener],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');

    try {
      const report = await deliver(
        `${await app.getUrl()}/payouts/notifications?token=test-secret`,
        paymentMethodAddedNotification(),
        { attempts: 1 },
      );

      expect(report.delivered).toBe(true);
      expect(app.get(CardsListener).saved.map((card) => card.paymentMethodId)).toEqual(['pmt_3Vb8Hs1Ty6']);
    } finally {
      await app.close();
    }
  });

  describe('the mock payouts API', () => {
    const walletPayout = (requestId: string) => ({
      payout_method: {
        type: 'wallet',
        payment_method: 'mpesa',
        beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: '254700000001' } },
      },
      amount: { value: '125.50', currency_code: 'KES' },
      country_code: 'KE',
      purpose: 'seller_earnings',
      reference: 'earnings-2030-05',
      request_id: requestId,
    });

    let mock: MockPayoutsApi;
    let payouts: PayoutsService;
    let close: () => Promise<void>;

    beforeEach(async () => {
      mock = await MockPayoutsApi.start({ apiKey: 'test-api-key', accessToken: 'test-access-token' });
      const moduleRef = await Test.createTestingModule({
        imports: [
          PayoutsModule.forRoot({
            baseUrl: mock.baseUrl,
            apiKey: 'test-api-key',
            accessToken: 'test-access-token',
            retries: { baseDelayMs: 10, maxDelayMs: 50 },
            notifications: false,
          }),
        ],
      }).compile();
      payouts = moduleRef.get(PayoutsService);
      close = () => moduleRef.close();
    });

    afterEach(async () => {
      await close();
      await mock.close();
    });

    it('retries a 503 with the same request_id', async () => {
      mock.fail({ times: 1, when: { requestId: 'req-1' } }, MockFault.unavailable(1));

      const result = await payouts.createPayout(walletPayout('req-1'));

      expect(result.status).toBe(201);
      expect(mock.callsFor('req-1').map((call) => call.status)).toEqual([503, 201]);
    });

    it('reports an unknown outcome when the connection drops after the payout was made', async () => {
      mock.fail({ times: 1 }, MockFault.resetAfterCommit());

      await expect(payouts.createPayout(walletPayout('req-2'))).rejects.toBeInstanceOf(PayoutOutcomeUnknownError);
      expect(mock.payouts.has('req-2')).toBe(true);
      expect(mock.callsFor('req-2')).toHaveLength(1);
    });
  });
});
