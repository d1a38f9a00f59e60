import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DispatchedNotification,
  type NotificationContext,
  type NotificationDispatcher,
  type NotificationDispatcherFactory,
  type NotificationDispatcherHost,
  type NotificationDispatchOutcome,
  OnPaymentMethodAdded,
  PaymentMethodNotification,
  PayoutsConfigError,
} from 'nestjs-payouts';
import { getPayoutsQueueToken } from 'nestjs-payouts/queue';
import { RecordingLogger } from '../recording-logger.js';
import {
  ADAPTERS,
  bootError,
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';

@Injectable()
class AddedCards {
  readonly received: [PaymentMethodNotification, NotificationContext][] = [];

  @OnPaymentMethodAdded()
  added(notification: PaymentMethodNotification, context: NotificationContext): void {
    this.received.push([notification, context]);
  }
}

/** A dispatcher of the test's own: keeps what the route hands it, answers the outcome the test sets. */
class KeepingDispatcher implements NotificationDispatcher {
  readonly kept: [DispatchedNotification, NotificationContext][] = [];
  readonly queue = { kind: 'a queue of the test' };
  outcome: NotificationDispatchOutcome = 'enqueued';

  constructor(readonly host: NotificationDispatcherHost) {}

  dispatch(notification: DispatchedNotification, context: NotificationContext): Promise<NotificationDispatchOutcome> {
    this.kept.push([notification, context]);
    return Promise.resolve(this.outcome);
  }
}

function keeping(route?: boolean): NotificationDispatcherFactory & { dispatcher?: KeepingDispatcher } {
  const factory: NotificationDispatcherFactory & { dispatcher?: KeepingDispatcher } = {
    ...(route !== undefined && { route }),
    create: (host) => (factory.dispatcher = new KeepingDispatcher(host)),
  };
  return factory;
}

describe('notifications.dispatcher: a dispatcher replacing the inline one', () => {
  let running: NotificationsApp | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  describe.each(ADAPTERS)('on %s', (adapter) => {
    it('gets every valid notification; enqueued is acknowledged, failed is a 500, and no handler runs inline', async () => {
      const factory = keeping();
      running = await startNotificationsApp({
        adapter,
        notifications: { verification: 'none', dispatcher: factory },
        providers: [AddedCards],
      });
      const notification = cardAdded();

      const enqueued = await post(running.url('payouts/notifications'), notification);
      factory.dispatcher!.outcome = 'failed';
      const failed = await post(running.url('payouts/notifications'), notification);

      expect([enqueued.status, enqueued.body]).toEqual([200, '{"ResultCode":0}']);
      expect(failed.status).toBe(500);
      expect(factory.dispatcher!.kept).toHaveLength(2);
      expect(factory.dispatcher!.kept[0]![0]).toBeInstanceOf(PaymentMethodNotification);
      expect(factory.dispatcher!.kept[0]![1]).toMatchObject({ source: 'route', attempt: 1, account: 'default' });
      expect(running.app.get(AddedCards).received).toEqual([]);
    });
  });

  it('gives the factory the account, the route validation and the discovered handlers', async () => {
    const factory = keeping();
    running = await startNotificationsApp({
      adapter: 'express',
      notifications: { verification: 'none', dispatcher: factory },
      providers: [AddedCards],
    });
    const { host } = factory.dispatcher!;
    const parsed = host.parse(JSON.parse(JSON.stringify(cardAdded())));
    const handlers = host.handlersFor('PAYMENT_METHOD_ADDED');

    expect(host.account).toBe('default');
    expect(parsed.notification).toBeInstanceOf(PaymentMethodNotification);
    expect(host.parse(cardAdded({ timestamp: 'yesterday' })).errors).toEqual([
      { field: 'timestamp', message: 'must be an ISO 8601 date-time string' },
    ]);
    expect(host.parse('not an object').errors).toEqual([{ field: '', message: 'must be a JSON object' }]);
    expect(handlers.map((handler) => handler.name)).toEqual(['AddedCards.added']);
    expect(host.handlersFor('PAYMENT_METHOD_REMOVED')).toEqual([]);
    const context: NotificationContext = {
      rawBody: undefined,
      headers: {},
      receivedAt: new Date(),
      dedupeKey: 'a-key',
      account: 'default',
      ip: undefined,
      source: 'queue',
      attempt: 2,
    };
    await handlers[0]!.invoke(parsed.notification!, context);
    expect(running.app.get(AddedCards).received).toEqual([[parsed.notification, context]]);
  });

  it("exports the dispatcher's queue under the registration's queue token; the inline dispatcher's is null", async () => {
    const factory = keeping();
    running = await startNotificationsApp({
      adapter: 'express',
      notifications: { verification: 'none', dispatcher: factory },
    });
    expect(running.app.get(getPayoutsQueueToken())).toBe(factory.dispatcher!.queue);
    await running.close();

    running = await startNotificationsApp({ adapter: 'express', notifications: { verification: 'none' } });
    expect(running.app.get(getPayoutsQueueToken())).toBeNull();
  });

  it('serves no route, and warns of no missing verification, for a dispatcher that takes no HTTP notifications', async () => {
    const logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter: 'fastify',
      notifications: { verification: 'none', dispatcher: keeping(false) },
      providers: [AddedCards],
      logger,
    });

    expect((await post(running.url('payouts/notifications'), cardAdded())).status).toBe(404);
    expect(logger.lines.join('\n')).not.toContain("verification is 'none'");
    expect(logger.messages('log')).toContain('PAYMENT_METHOD_ADDED notifications go to AddedCards.added');
  });

  it.each([
    [{ dispatcher: () => undefined }, 'notifications.dispatcher'],
    [{ dispatcher: { create: (): undefined => undefined, route: 'no' } }, 'notifications.dispatcher'],
    [{ dispatcher: { create: (): undefined => undefined, runsHandlers: 'no' } }, 'notifications.dispatcher'],
    [{ dispatcher: { create: (): undefined => undefined, storageOf: 'queue' } }, 'notifications.dispatcher'],
    [{ dispatcher: keeping(), dedupe: { ttlMs: 1000 } }, 'notifications.dedupe'],
  ])('fails the bootstrap on %j', async (extra, option) => {
    const error = await bootError({
      adapter: 'express',
      notifications: { verification: 'none', ...(extra as object) },
    });
    expect(error).toBeInstanceOf(PayoutsConfigError);
    expect((error as PayoutsConfigError).option).toBe(option);
  });
});
