import { Test } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getPayoutsServiceToken, PayoutsService } from 'nestjs-payouts';
import {
  deliver,
  FakePayoutsService,
  notificationHandlerArgs,
  paymentMethodAddedNotification,
} from 'nestjs-payouts/testing';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { PayoutsApiStub } from '../payouts/payouts-api-stub.js';
import { EuCards } from './account-handlers.fixture.js';
import { accountOptions, EU, KE, registration, routeOf, UNNAMED } from './accounts-test-app.js';

describe('FakePayoutsService for a named registration', () => {
  let api: PayoutsApiStub;

  beforeEach(async () => {
    api = await PayoutsApiStub.start();
  });

  afterEach(async () => {
    await api.close();
  });

  it("replaces that registration's service only, through getPayoutsServiceToken(name)", async () => {
    const fake = new FakePayoutsService().resolveNext({ status: 201, body: { id: 'po_fake' } });
    const moduleRef = await Test.createTestingModule({
      imports: [
        registration('forRoot', {}, accountOptions(UNNAMED, api.baseUrl, { notifications: false })),
        registration('forRoot', { name: 'eu' }, accountOptions(EU, api.baseUrl, { notifications: false })),
        registration('forRootAsync', { name: 'ke' }, accountOptions(KE, api.baseUrl, { notifications: false })),
      ],
    })
      .overrideProvider(getPayoutsServiceToken('eu'))
      .useValue(fake)
      .compile();
    try {
      const eu = moduleRef.get<PayoutsService>(getPayoutsServiceToken('eu'));
      await expect(eu.createPayout(walletPayoutRequest('req_eu_1'))).resolves.toMatchObject({
        body: { id: 'po_fake' },
      });
      await moduleRef.get<PayoutsService>(getPayoutsServiceToken('ke')).createPayout(walletPayoutRequest('req_ke_1'));
      await moduleRef.get(PayoutsService).createPayout(walletPayoutRequest('req_default_1'));

      expect(eu).toBe(fake);
      expect(fake.requests.map((request) => request.request_id)).toEqual(['req_eu_1']);
      expect(api.requests.map((request) => request.headers['x-api-key'])).toEqual([KE.apiKey, UNNAMED.apiKey]);
    } finally {
      await moduleRef.close();
    }
  });
});

describe('notificationHandlerArgs() with an account', () => {
  const body = paymentMethodAddedNotification({ timestamp: '2030-05-01T10:00:00.000Z' });
  const key = 'PAYMENT_METHOD_ADDED:shp_7Qk2Lm9Xr4:pmt_3Vb8Hs1Ty6:2030-05-01T10%3A00%3A00.000Z';

  it("gives the context of the named registration's route, its dedupe key included", () => {
    const [, context] = notificationHandlerArgs(body, { account: 'eu' });

    expect(context).toMatchObject({ account: 'eu', dedupeKey: `eu/${key}` });
  });

  it("gives the unnamed registration's context by default", () => {
    const [, context] = notificationHandlerArgs(body);

    expect(context).toMatchObject({ account: 'default', dedupeKey: key });
  });

  it('matches what the route passes to a handler of that account', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [registration('forRoot', { name: 'eu' }, accountOptions(EU, 'http://127.0.0.1:9/v1'))],
      providers: [EuCards],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const origin = await app.getUrl();
      const report = await deliver(
        routeOf((path) => `${origin}/${path}`, EU),
        body,
        { attempts: 1 },
      );

      expect(report.delivered).toBe(true);
      const [received] = app.get(EuCards).received;
      const [notification, context] = notificationHandlerArgs(body, { account: 'eu' });
      expect(received!.notification).toEqual(notification);
      expect({ account: received!.context.account, dedupeKey: received!.context.dedupeKey }).toEqual({
        account: context.account,
        dedupeKey: context.dedupeKey,
      });
    } finally {
      await app.close();
    }
  });
});
