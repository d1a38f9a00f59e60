import { Injectable, Module } from '@nestjs/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getPayoutsServiceToken, InjectPayouts, PayoutsApiError, PayoutsService } from 'nestjs-payouts';
import {
  ADAPTERS,
  createNotificationsApp,
  type NotificationsApp,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { CREATED_PAYOUT, PayoutsApiStub, type RecordedRequest } from '../payouts/payouts-api-stub.js';
import {
  accountOptions,
  countingTokenSource,
  EU,
  KE,
  REGISTRATION_METHODS,
  registration,
} from './accounts-test-app.js';

/** A service of the app that pays out from both accounts. */
@Injectable()
class Treasury {
  constructor(
    @InjectPayouts('eu') readonly eu: PayoutsService,
    @InjectPayouts('ke') readonly ke: PayoutsService,
  ) {}
}

/** Injects the plain class, which stays the unnamed registration's service. */
@Injectable()
class DefaultPayouts {
  constructor(readonly payouts: PayoutsService) {}
}

const sent = (request: RecordedRequest) => ({
  path: request.path,
  apiKey: request.headers['x-api-key'],
  authorization: request.headers.authorization,
  requestId: (JSON.parse(request.body) as { request_id: string }).request_id,
});

describe.each(ADAPTERS.flatMap((adapter) => REGISTRATION_METHODS.map((method) => [adapter, method] as const)))(
  'two accounts on %s, registered with %s',
  (adapter, method) => {
    let euApi: PayoutsApiStub;
    let keApi: PayoutsApiStub;
    let running: NotificationsApp | undefined;

    beforeEach(async () => {
      [euApi, keApi] = await Promise.all([PayoutsApiStub.start(), PayoutsApiStub.start()]);
    });

    afterEach(async () => {
      await running?.close();
      running = undefined;
      await Promise.all([euApi.close(), keApi.close()]);
    });

    it("sends each account's payouts to its own API with its own key and token", async () => {
      running = await startNotificationsApp({
        adapter,
        imports: [
          registration(method, { name: 'eu' }, accountOptions(EU, euApi.baseUrl)),
          registration(method, { name: 'ke' }, accountOptions(KE, keApi.baseUrl)),
        ],
        providers: [Treasury],
      });
      const treasury = running.app.get(Treasury);

      await expect(treasury.eu.createPayout(walletPayoutRequest('req_eu_1'))).resolves.toMatchObject({
        status: 201,
        body: CREATED_PAYOUT,
      });
      await treasury.ke.createPayout(walletPayoutRequest('req_ke_1'));

      expect(euApi.requests.map(sent)).toEqual([
        { path: '/payouts', apiKey: EU.apiKey, authorization: 'Bearer eu-static-token', requestId: 'req_eu_1' },
      ]);
      expect(keApi.requests.map(sent)).toEqual([
        { path: '/payouts', apiKey: KE.apiKey, authorization: 'Bearer ke-static-token', requestId: 'req_ke_1' },
      ]);
      expect(treasury.eu).toBeInstanceOf(PayoutsService);
      expect(treasury.eu).not.toBe(treasury.ke);
      expect(running.app.get(getPayoutsServiceToken('eu'))).toBe(treasury.eu);
      expect(running.app.get(getPayoutsServiceToken('ke'))).toBe(treasury.ke);
    });

    it("refreshes only the account's own token after a 401", async () => {
      const euTokens = countingTokenSource('eu-token');
      const keTokens = countingTokenSource('ke-token');
      euApi.reply({ status: 401, body: { error: 'token_expired' } }, { status: 201, body: CREATED_PAYOUT });
      running = await startNotificationsApp({
        adapter,
        imports: [
          registration(method, { name: 'eu' }, accountOptions(EU, euApi.baseUrl, { accessToken: euTokens.source })),
          registration(method, { name: 'ke' }, accountOptions(KE, keApi.baseUrl, { accessToken: keTokens.source })),
        ],
        providers: [Treasury],
      });
      const treasury = running.app.get(Treasury);

      await treasury.ke.createPayout(walletPayoutRequest('req_ke_1'));
      await expect(treasury.eu.createPayout(walletPayoutRequest('req_eu_1'))).resolves.toMatchObject({ status: 201 });
      await treasury.ke.createPayout(walletPayoutRequest('req_ke_2'));

      expect(euApi.requests.map((request) => request.headers.authorization)).toEqual([
        'Bearer eu-token-1',
        'Bearer eu-token-2',
      ]);
      expect(keApi.requests.map((request) => request.headers.authorization)).toEqual([
        'Bearer ke-token-1',
        'Bearer ke-token-1',
      ]);
      expect([euTokens.calls(), keTokens.calls()]).toEqual([2, 1]);
    });

    it("retries by the account's own policy", async () => {
      euApi.reply({ status: 503, body: {} });
      keApi.reply({ status: 503, body: {} });
      running = await startNotificationsApp({
        adapter,
        imports: [
          registration(method, { name: 'eu' }, { ...accountOptions(EU, euApi.baseUrl), retries: 0 }),
          registration(method, { name: 'ke' }, accountOptions(KE, keApi.baseUrl)),
        ],
        providers: [Treasury],
      });
      const treasury = running.app.get(Treasury);

      await expect(treasury.eu.createPayout(walletPayoutRequest('req_eu_1'))).rejects.toBeInstanceOf(PayoutsApiError);
      await expect(treasury.ke.createPayout(walletPayoutRequest('req_ke_1'))).rejects.toBeInstanceOf(PayoutsApiError);

      expect(euApi.requests).toHaveLength(1);
      expect(keApi.requests).toHaveLength(3);
    });

    it('keeps plain PayoutsService for the unnamed registration beside named ones', async () => {
      const defaultApi = await PayoutsApiStub.start();
      try {
        running = await startNotificationsApp({
          adapter,
          imports: [
            registration(method, {}, { ...accountOptions(EU, defaultApi.baseUrl), notifications: false }),
            registration(method, { name: 'eu' }, accountOptions(EU, euApi.baseUrl)),
          ],
          providers: [DefaultPayouts],
        });
        const { payouts } = running.app.get(DefaultPayouts);

        await payouts.createPayout(walletPayoutRequest('req_default_1'));

        expect(defaultApi.requests.map(sent)).toEqual([
          { path: '/payouts', apiKey: EU.apiKey, authorization: 'Bearer eu-static-token', requestId: 'req_default_1' },
        ]);
        expect(euApi.requests).toEqual([]);
        expect(running.app.get(getPayoutsServiceToken())).toBe(payouts);
        expect(running.app.get(getPayoutsServiceToken('default'))).toBe(payouts);
        expect(running.app.get(getPayoutsServiceToken('eu'))).not.toBe(payouts);
      } finally {
        await defaultApi.close();
      }
    });

    it('exports no plain PayoutsService when every registration is named', async () => {
      const app = createNotificationsApp({
        adapter,
        imports: [registration(method, { name: 'eu' }, accountOptions(EU, euApi.baseUrl))],
        providers: [DefaultPayouts],
      });

      await expect(app).rejects.toThrow(/PayoutsService/);
    });
  },
);

describe.each(REGISTRATION_METHODS)('named registrations with isGlobal, by %s', (method) => {
  it('serve @InjectPayouts(name) in modules that do not import them', async () => {
    const api = await PayoutsApiStub.start();
    @Module({ providers: [Treasury] })
    class TreasuryModule {}
    const running = await startNotificationsApp({
      adapter: 'express',
      imports: [
        registration(method, { name: 'eu', isGlobal: true }, accountOptions(EU, api.baseUrl)),
        registration(method, { name: 'ke', isGlobal: true }, accountOptions(KE, api.baseUrl)),
        TreasuryModule,
      ],
    });
    try {
      await running.app.get(Treasury).ke.createPayout(walletPayoutRequest('req_ke_1'));
      await running.app.get(Treasury).eu.createPayout(walletPayoutRequest('req_eu_1'));

      expect(api.requests.map(sent).map(({ apiKey, requestId }) => [apiKey, requestId])).toEqual([
        [KE.apiKey, 'req_ke_1'],
        [EU.apiKey, 'req_eu_1'],
      ]);
    } finally {
      await running.close();
      await api.close();
    }
  });
});
