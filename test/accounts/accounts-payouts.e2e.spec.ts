import { Injectable, Module } from '@nestjs/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getPayoutsServiceToken, InjectPayouts, PayoutsApiError, PayoutsService } from 'nestjs-payouts';
import { MockFault, MockPayoutsApi, type MockPayoutsCall } from 'nestjs-payouts/testing';
import {
  ADAPTERS,
  createNotificationsApp,
  type NotificationsApp,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import {
  accountOptions,
  countingTokenSource,
  EU,
  KE,
  REGISTRATION_METHODS,
  registration,
  type TestAccount,
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

/** A mock payouts API that accepts only `account`'s API key and `accessToken` (default its static token). */
function accountApi(
  account: TestAccount,
  accessToken: string = `${account.name}-static-token`,
): Promise<MockPayoutsApi> {
  return MockPayoutsApi.start({ apiKey: account.apiKey, accessToken });
}

/** What reached the API: `valid` credentials are exactly the ones the API accepts. */
const sent = (call: MockPayoutsCall) => ({
  path: call.path,
  credentials: call.credentials,
  requestId: call.requestId,
});
const VALID = { apiKey: 'valid', accessToken: 'valid' };

describe.each(ADAPTERS.flatMap((adapter) => REGISTRATION_METHODS.map((method) => [adapter, method] as const)))(
  'two accounts on %s, registered with %s',
  (adapter, method) => {
    let euApi: MockPayoutsApi;
    let keApi: MockPayoutsApi;
    let running: NotificationsApp | undefined;

    beforeEach(async () => {
      [euApi, keApi] = await Promise.all([accountApi(EU), accountApi(KE)]);
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

      const euResult = await treasury.eu.createPayout(walletPayoutRequest('req_eu_1'));
      expect(euResult).toMatchObject({ status: 201, body: euApi.payouts.get('req_eu_1') });
      expect(euResult.body).toMatchObject({ request_id: 'req_eu_1' });
      await treasury.ke.createPayout(walletPayoutRequest('req_ke_1'));

      expect(euApi.calls.map(sent)).toEqual([{ path: '/payouts', credentials: VALID, requestId: 'req_eu_1' }]);
      expect(keApi.calls.map(sent)).toEqual([{ path: '/payouts', credentials: VALID, requestId: 'req_ke_1' }]);
      expect(treasury.eu).toBeInstanceOf(PayoutsService);
      expect(treasury.eu).not.toBe(treasury.ke);
      expect(running.app.get(getPayoutsServiceToken('eu'))).toBe(treasury.eu);
      expect(running.app.get(getPayoutsServiceToken('ke'))).toBe(treasury.ke);
    });

    it("refreshes only the account's own token after a 401", async () => {
      const euTokens = countingTokenSource('eu-token');
      const keTokens = countingTokenSource('ke-token');
      // Each API accepts one token only: the token the account should send on that call.
      await Promise.all([euApi.close(), keApi.close()]);
      [euApi, keApi] = await Promise.all([accountApi(EU, 'eu-token-2'), accountApi(KE, 'ke-token-1')]);
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

      // eu-token-1 refused, then eu-token-2 accepted; ke-token-1 accepted both times.
      expect(euApi.calls.map((call) => [call.credentials.accessToken, call.status])).toEqual([
        ['wrong', 401],
        ['valid', 201],
      ]);
      expect(keApi.calls.map((call) => [call.credentials.accessToken, call.status])).toEqual([
        ['valid', 201],
        ['valid', 201],
      ]);
      expect([euTokens.calls(), keTokens.calls()]).toEqual([2, 1]);
    });

    it("retries by the account's own policy", async () => {
      euApi.fail({}, MockFault.status(503, {}));
      keApi.fail({}, MockFault.status(503, {}));
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

      expect(euApi.calls).toHaveLength(1);
      expect(keApi.calls).toHaveLength(3);
    });

    it('keeps plain PayoutsService for the unnamed registration beside named ones', async () => {
      const defaultApi = await accountApi(EU);
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

        expect(defaultApi.calls.map(sent)).toEqual([
          { path: '/payouts', credentials: VALID, requestId: 'req_default_1' },
        ]);
        expect(euApi.calls).toEqual([]);
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
    const [euApi, keApi] = await Promise.all([accountApi(EU), accountApi(KE)]);
    @Module({ providers: [Treasury] })
    class TreasuryModule {}
    const running = await startNotificationsApp({
      adapter: 'express',
      imports: [
        registration(method, { name: 'eu', isGlobal: true }, accountOptions(EU, euApi.baseUrl)),
        registration(method, { name: 'ke', isGlobal: true }, accountOptions(KE, keApi.baseUrl)),
        TreasuryModule,
      ],
    });
    try {
      await running.app.get(Treasury).ke.createPayout(walletPayoutRequest('req_ke_1'));
      await running.app.get(Treasury).eu.createPayout(walletPayoutRequest('req_eu_1'));

      expect(keApi.calls.map(sent)).toEqual([{ path: '/payouts', credentials: VALID, requestId: 'req_ke_1' }]);
      expect(euApi.calls.map(sent)).toEqual([{ path: '/payouts', credentials: VALID, requestId: 'req_eu_1' }]);
    } finally {
      await running.close();
      await Promise.all([euApi.close(), keApi.close()]);
    }
  });
});
