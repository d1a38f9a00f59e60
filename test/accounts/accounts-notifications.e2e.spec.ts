import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryNotificationDedupeStore } from 'nestjs-payouts';
import type { NotificationDedupeStore } from 'nestjs-payouts';
import { AuditTrail, CardEvents, type ReceivedNotification } from '../notifications/notification-handlers.fixture.js';
import {
  ADAPTERS,
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { EuCards, KeCards, NamedAccountRemovals } from './account-handlers.fixture.js';
import {
  accountOptions,
  EU,
  KE,
  REGISTRATION_METHODS,
  registration,
  type RegistrationMethod,
  routeOf,
  type TestAccount,
  UNNAMED,
  UNUSED_BASE_URL,
} from './accounts-test-app.js';
import type { AdapterName } from '../notifications/notifications-test-app.js';

const ACK = '{"ResultCode":0}';
const UNAUTHORIZED = '{"statusCode":401,"message":"Unauthorized"}';
const HANDLERS = [EuCards, KeCards, CardEvents, AuditTrail, NamedAccountRemovals];

/** Who received what: `handler@account`, in order. */
const deliveries = (received: readonly ReceivedNotification[]) =>
  received.map(({ handler, context }) => `${handler}@${context.account}`);

describe.each(ADAPTERS.flatMap((adapter) => REGISTRATION_METHODS.map((method) => [adapter, method] as const)))(
  'notifications of several accounts on %s, registered with %s',
  (adapter, method) => {
    let running: NotificationsApp | undefined;

    afterEach(async () => {
      await running?.close();
      running = undefined;
    });

    /** The unnamed account, `eu` and `ke`, each with its own route and secret, optionally on one shared store. */
    async function startAccounts(
      options: { logger?: RecordingLogger; store?: NotificationDedupeStore } = {},
    ): Promise<NotificationsApp> {
      const optionsOf = (account: TestAccount) => {
        const { notifications, ...rest } = accountOptions(account, UNUSED_BASE_URL);
        if (!notifications || !options.store) return { notifications, ...rest };
        return { ...rest, notifications: { ...notifications, dedupe: { store: options.store } } };
      };
      running = await startNotificationsApp({
        adapter,
        logger: options.logger,
        imports: [
          registration(method, {}, optionsOf(UNNAMED)),
          registration(method, { name: 'eu' }, optionsOf(EU)),
          registration(method, { name: 'ke' }, optionsOf(KE)),
        ],
        providers: HANDLERS,
      });
      return running;
    }

    const received = (app: NotificationsApp, handlerClass: (typeof HANDLERS)[number]) =>
      deliveries(app.app.get(handlerClass).received);

    it("runs eu's own and the unqualified handlers only, with context.account 'eu'", async () => {
      const app = await startAccounts();

      const reply = await post(routeOf(app.url, EU), cardAdded());

      expect([reply.status, reply.body]).toEqual([200, ACK]);
      expect(received(app, EuCards)).toEqual(['eu added@eu']);
      expect(received(app, CardEvents)).toEqual(['added@eu']);
      expect(received(app, AuditTrail)).toEqual(['any@eu']);
      expect(received(app, KeCards)).toEqual([]);
    });

    it('gives each account its own handlers, and the unnamed one the account "default"', async () => {
      const app = await startAccounts();

      await post(routeOf(app.url, KE), cardAdded());
      await post(routeOf(app.url, UNNAMED), cardAdded());
      await post(routeOf(app.url, EU), cardAdded({ eventType: 'PAYMENT_METHOD_REMOVED' }));
      await post(routeOf(app.url, UNNAMED), cardAdded({ eventType: 'PAYMENT_METHOD_REMOVED' }));

      expect(received(app, KeCards)).toEqual(['ke added@ke']);
      expect(received(app, EuCards)).toEqual([]);
      expect(received(app, CardEvents)).toEqual(['added@ke', 'added@default', 'removed@eu', 'removed@default']);
      expect(received(app, NamedAccountRemovals)).toEqual(['named removed@eu']);
      expect(received(app, AuditTrail)).toEqual(['any@ke', 'any@default', 'any@eu', 'any@default']);
    });

    it("refuses another account's secret with 401, and runs no handler", async () => {
      const app = await startAccounts();

      const keSecretOnEu = await post(routeOf(app.url, EU, KE.secret), cardAdded());
      const euSecretOnKe = await post(routeOf(app.url, KE, EU.secret), cardAdded());
      const unnamedSecretOnEu = await post(routeOf(app.url, EU, UNNAMED.secret), cardAdded());

      for (const reply of [keSecretOnEu, euSecretOnKe, unnamedSecretOnEu]) {
        expect([reply.status, reply.body]).toEqual([401, UNAUTHORIZED]);
      }
      for (const handlerClass of HANDLERS) {
        expect(received(app, handlerClass)).toEqual([]);
      }
    });

    it.each([
      ['its own in-memory store', () => undefined],
      ['one shared store', () => new InMemoryNotificationDedupeStore()],
    ])('handles a notification posted to each account once on each, with %s', async (_name, store) => {
      const app = await startAccounts({ store: store() });
      const notification = cardAdded();

      for (const account of [EU, KE, UNNAMED, EU, KE, UNNAMED]) {
        const reply = await post(routeOf(app.url, account), notification);
        expect([reply.status, reply.body]).toEqual([200, ACK]);
      }

      const cards = app.app.get(CardEvents).received;
      expect(deliveries(cards)).toEqual(['added@eu', 'added@ke', 'added@default']);
      const { shopper, paymentMethod } = notification as { shopper: { id: string }; paymentMethod: { id: string } };
      const key = `PAYMENT_METHOD_ADDED:${shopper.id}:${paymentMethod.id}:2025-03-14T09%3A26%3A53.589Z`;
      expect(cards.map(({ context }) => context.dedupeKey)).toEqual([`eu/${key}`, `ke/${key}`, key]);
    });

    it('logs which handlers serve which account', async () => {
      const logger = new RecordingLogger();
      await startAccounts({ logger });

      const lines = logger.messages('log');
      expect(lines).toContainEqual(
        "Account 'eu': PAYMENT_METHOD_ADDED notifications go to EuCards.added, CardEvents.added, AuditTrail.record",
      );
      expect(lines).toContainEqual(
        "Account 'ke': PAYMENT_METHOD_ADDED notifications go to KeCards.added, CardEvents.added, AuditTrail.record",
      );
      expect(lines).toContainEqual(
        "Account 'default': PAYMENT_METHOD_ADDED notifications go to CardEvents.added, AuditTrail.record",
      );
      expect(lines).toContainEqual(
        "Account 'eu': PAYMENT_METHOD_REMOVED notifications go to CardEvents.removed, NamedAccountRemovals.removed, AuditTrail.record",
      );
      expect(lines).toContainEqual(
        "Account 'default': PAYMENT_METHOD_REMOVED notifications go to CardEvents.removed, AuditTrail.record",
      );
      expect(lines).toContainEqual("Account 'ke': Notifications of any other type go to AuditTrail.record");
    });
  },
);

describe.each(ADAPTERS)('an account without handlers of its own, on %s', (adapter: AdapterName) => {
  it.each(REGISTRATION_METHODS)('is warned about by name (%s)', async (method: RegistrationMethod) => {
    const logger = new RecordingLogger();
    const running = await startNotificationsApp({
      adapter,
      logger,
      imports: [
        registration(method, { name: 'eu' }, accountOptions(EU, UNUSED_BASE_URL)),
        registration(method, { name: 'ke' }, accountOptions(KE, UNUSED_BASE_URL)),
      ],
      providers: [EuCards],
    });
    try {
      expect(logger.messages('warn')).toContainEqual(
        "Account 'ke': No handler for PAYMENT_METHOD_ADDED notifications: they will be acknowledged and dropped. " +
          'Decorate a provider method with @OnPaymentMethod…() to receive them.',
      );
      expect(logger.messages('warn').filter((line) => line.startsWith("Account 'eu': No handler"))).toEqual([
        expect.stringContaining('PAYMENT_METHOD_REMOVED'),
      ]);
    } finally {
      await running.close();
    }
  });
});
