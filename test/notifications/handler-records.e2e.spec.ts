import { Injectable } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  InMemoryNotificationDedupeStore,
  type NotificationContext,
  type NotificationDedupeStore,
  type NotificationsOptions,
  OnPaymentMethodAdded,
  PaymentMethodNotification,
  PayoutsService,
  type PayoutsNotificationEvent,
} from 'nestjs-payouts';
import { RedisNotificationDedupeStore } from 'nestjs-payouts/redis';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { dedupeKeyOf } from '../queue/queue-test-app.js';
import { connectRedisClient, type TestRedisClient } from '../redis/redis-clients.js';
import { deferred } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';

const ACK = '{"ResultCode":0}';
const FAILED = '{"statusCode":500,"message":"The notification could not be handled"}';

/** The attempt each run of a handler was told, in order. */
type Runs = number[];

/** Saves the card: succeeds unless told to fail its first `failFirst` runs. */
@Injectable()
class CardStore {
  readonly runs: Runs = [];
  failFirst = 0;

  @OnPaymentMethodAdded()
  save(_notification: PaymentMethodNotification, context: NotificationContext): void {
    this.runs.push(context.attempt);
    if (this.runs.length <= this.failFirst) throw new Error('card store down');
  }
}

/** E-mails the shopper: fails its first `failFirst` runs, or waits for `hold` when set. */
@Injectable()
class Mailer {
  readonly runs: Runs = [];
  failFirst = 0;
  hold: Promise<void> | undefined;

  @OnPaymentMethodAdded()
  async send(_notification: PaymentMethodNotification, context: NotificationContext): Promise<void> {
    this.runs.push(context.attempt);
    if (this.hold) await this.hold;
    if (this.runs.length <= this.failFirst) throw new Error('mail server down');
  }
}

/** A handler a later deploy adds. */
@Injectable()
class Audit {
  readonly runs: Runs = [];

  @OnPaymentMethodAdded()
  record(_notification: PaymentMethodNotification, context: NotificationContext): void {
    this.runs.push(context.attempt);
  }
}

interface StoreKind {
  readonly name: string;
  /** A store over the same remembered state each time it is called within one test. */
  store(): NotificationDedupeStore;
}

function handlerRecordSuite(kind: () => StoreKind): void {
  describe.each(ADAPTERS)('on %s', (adapter) => {
    const apps: NotificationsApp[] = [];
    let events: PayoutsNotificationEvent[];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((app) => app.close()));
    });

    async function start(providers: (typeof CardStore | typeof Mailer | typeof Audit)[], options = {}) {
      const notifications: NotificationsOptions = {
        verification: 'none',
        dedupe: { store: kind().store() },
        ...options,
      };
      const app = await startNotificationsApp({ adapter, notifications, providers });
      apps.push(app);
      events = [];
      app.app.get(PayoutsService).on('notification', (event) => events.push(event));
      return { app, deliver: (body: unknown) => post(app.url('payouts/notifications'), body) };
    }

    it('runs the handler that succeeded once, and the failing one on each of three deliveries', async () => {
      const { app, deliver } = await start([CardStore, Mailer]);
      app.app.get(Mailer).failFirst = 2;
      const notification = cardAdded();

      const replies = [await deliver(notification), await deliver(notification), await deliver(notification)];
      const resent = await deliver(notification);

      expect(replies.map(({ status, body }) => [status, body])).toEqual([
        [500, FAILED],
        [500, FAILED],
        [200, ACK],
      ]);
      expect([resent.status, resent.body]).toEqual([200, ACK]);
      expect(app.app.get(CardStore).runs).toEqual([1]);
      expect(app.app.get(Mailer).runs).toEqual([1, 2, 3]);
      expect(events.map(({ outcome, dedupe, skippedHandlers }) => [outcome, dedupe, skippedHandlers])).toEqual([
        ['failed', 'claimed', undefined],
        ['failed', 'claimed', ['CardStore.save']],
        ['acknowledged', 'claimed', ['CardStore.save']],
        ['duplicate', 'handled', undefined],
      ]);
    });

    it('records a handler that succeeds after the time limit as succeeded for the re-send', async () => {
      const { app, deliver } = await start([CardStore, Mailer], { handlerTimeoutMs: 200 });
      const late = deferred();
      app.app.get(CardStore).failFirst = 1;
      app.app.get(Mailer).hold = late.promise;
      const notification = cardAdded();

      const first = await deliver(notification);
      const meanwhile = await deliver(notification);
      late.resolve();
      let resent = await deliver(notification);
      // The late handler settles, and its delivery records it, right after the resolve: a 409 until then.
      for (let tries = 0; resent.status === 409 && tries < 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        resent = await deliver(notification);
      }

      expect([first.status, meanwhile.status, resent.status, resent.body]).toEqual([500, 409, 200, ACK]);
      expect(app.app.get(Mailer).runs).toEqual([1]);
      expect(app.app.get(CardStore).runs).toEqual([1, 2]);
    });

    it('after a deploy, runs a handler it added and ignores one it removed', async () => {
      const before = await start([CardStore, Mailer]);
      before.app.app.get(Mailer).failFirst = 1;
      const notification = cardAdded();
      expect((await before.deliver(notification)).status).toBe(500);
      await before.app.close();
      apps.splice(apps.indexOf(before.app), 1);

      const after = await start([CardStore, Audit]);
      const resent = await after.deliver(notification);

      expect([resent.status, resent.body]).toEqual([200, ACK]);
      expect(before.app.app.get(CardStore).runs).toEqual([1]);
      expect(after.app.app.get(CardStore).runs).toEqual([]);
      expect(after.app.app.get(Audit).runs).toEqual([1]);
      expect(events.map(({ skippedHandlers }) => skippedHandlers)).toEqual([['CardStore.save']]);
    });

    it('acknowledges a re-send whose only failing handler a deploy removed, running nothing', async () => {
      const before = await start([CardStore, Mailer]);
      before.app.app.get(Mailer).failFirst = 1;
      const notification = cardAdded();
      expect((await before.deliver(notification)).status).toBe(500);
      await before.app.close();
      apps.splice(apps.indexOf(before.app), 1);

      const after = await start([CardStore]);
      const resent = await after.deliver(notification);

      expect([resent.status, resent.body]).toEqual([200, ACK]);
      expect(after.app.app.get(CardStore).runs).toEqual([]);
      expect(events.map(({ outcome, skippedHandlers }) => [outcome, skippedHandlers])).toEqual([
        ['acknowledged', ['CardStore.save']],
      ]);
    });
  });
}

describe(`a notification's handler records, with the in-memory store`, () => {
  let store: InMemoryNotificationDedupeStore;
  beforeEach(() => {
    store = new InMemoryNotificationDedupeStore();
  });
  handlerRecordSuite(() => ({ name: 'in-memory', store: () => store }));

  it('tells apart two instances of one handler class, provided under two tokens', async () => {
    const app = await startNotificationsApp({
      adapter: 'express',
      notifications: { verification: 'none', dedupe: { store } },
      providers: [
        { provide: 'FIRST_MAILER', useClass: Mailer },
        { provide: 'SECOND_MAILER', useClass: Mailer },
      ],
    });
    try {
      const first = app.app.get<string, Mailer>('FIRST_MAILER');
      const second = app.app.get<string, Mailer>('SECOND_MAILER');
      second.failFirst = 1;
      const notification = cardAdded();
      const statuses: number[] = [];
      for (let delivery = 0; delivery < 3; delivery++) {
        statuses.push((await post(app.url('payouts/notifications'), notification)).status);
      }

      expect(statuses).toEqual([500, 200, 200]);
      expect([first.runs, second.runs]).toEqual([[1], [1, 2]]);
    } finally {
      await app.close();
    }
  });

  it('runs every handler again with a store that keeps no records, as before', async () => {
    const inner = new InMemoryNotificationDedupeStore();
    // A store written before records existed: the three methods only.
    const plain: NotificationDedupeStore = {
      claim: (key, claimId) => inner.claim(key, claimId),
      complete: (key) => inner.complete(key),
      release: (key, claimId) => inner.release(key, claimId),
    };
    const app = await startNotificationsApp({
      adapter: 'express',
      notifications: { verification: 'none', dedupe: { store: plain } },
      providers: [CardStore, Mailer],
    });
    try {
      app.app.get(Mailer).failFirst = 1;
      const notification = cardAdded();
      const statuses: number[] = [];
      for (let delivery = 0; delivery < 3; delivery++) {
        statuses.push((await post(app.url('payouts/notifications'), notification)).status);
      }

      expect(statuses).toEqual([500, 200, 200]);
      expect(app.app.get(CardStore).runs).toEqual([1, 1]);
      expect(app.app.get(Mailer).runs).toEqual([1, 1]);
    } finally {
      await app.close();
    }
  });
});

describeWithRedis(`a notification's handler records, with the Redis store`, () => {
  let redis: RedisServer;
  let client: TestRedisClient;
  beforeAll(async () => {
    redis = await RedisServer.start();
    client = await connectRedisClient('ioredis', redis.url);
  });
  afterAll(async () => {
    client?.close();
    await redis?.close();
  });

  handlerRecordSuite(() => ({ name: 'redis', store: () => new RedisNotificationDedupeStore(client.client) }));

  describe('keys written by the previous release, or left by an instance that died', () => {
    let app: NotificationsApp;
    let store: RedisNotificationDedupeStore;
    beforeAll(async () => {
      store = new RedisNotificationDedupeStore(client.client);
      app = await startNotificationsApp({
        adapter: 'express',
        notifications: { verification: 'none', dedupe: { store } },
        providers: [CardStore, Mailer],
      });
    });
    afterAll(() => app?.close());
    beforeEach(() => {
      app.app.get(CardStore).runs.length = 0;
      app.app.get(Mailer).runs.length = 0;
      app.app.get(Mailer).failFirst = 0;
    });

    const deliver = (body: unknown) => post(app.url('payouts/notifications'), body);
    const runs = () => [app.app.get(CardStore).runs, app.app.get(Mailer).runs];
    /** Sets the notification's key to `value`, as another version or instance wrote it. */
    const write = async (notification: Record<string, unknown>, value: string, ...expiry: string[]) => {
      await client.command('SET', store.keyOf(dedupeKeyOf(notification)), value, ...expiry);
    };
    const read = (notification: Record<string, unknown>) =>
      client.command('GET', store.keyOf(dedupeKeyOf(notification)));

    it('acknowledges a notification marked handled, running nothing', async () => {
      const notification = cardAdded();
      await write(notification, 'handled', 'PX', '60000');

      const reply = await deliver(notification);

      expect([reply.status, reply.body]).toEqual([200, ACK]);
      expect(runs()).toEqual([[], []]);
    });

    it('answers 409 to a notification claimed by the previous release, then runs every handler once it is gone', async () => {
      const notification = cardAdded();
      await write(notification, 'claim:9b0c2f4e-previous-release', 'PX', '60000');

      const claimed = await deliver(notification);
      expect(claimed.status).toBe(409);
      expect(runs()).toEqual([[], []]);
      await client.command('DEL', store.keyOf(dedupeKeyOf(notification)));
      app.app.get(Mailer).failFirst = 1;
      const failed = await deliver(notification);

      expect(failed.status).toBe(500);
      expect(runs()).toEqual([[1], [1]]);
      expect(JSON.parse(String(await read(notification))!.slice('record:'.length))).toEqual({
        succeeded: ['CardStore.save'],
        failures: { 'Mailer.send': 1 },
      });
    });

    it('keeps the record of a claim whose instance died, and runs only the rest once its lease has ended', async () => {
      const notification = cardAdded();
      const [seconds] = (await client.command('TIME')) as [string, string];
      const leaseEnded = String(Number(seconds) * 1000 - 1000);
      const record = JSON.stringify({ succeeded: ['CardStore.save'], failures: { 'Mailer.send': 1 } });
      await write(notification, `claim:dead-instance\n${leaseEnded}\n${record}`, 'PX', '60000');

      const reply = await deliver(notification);

      expect([reply.status, reply.body]).toEqual([200, ACK]);
      expect(runs()).toEqual([[], [2]]);
      expect(await read(notification)).toBe('handled');
    });

    it('answers 409 while the lease of a claim over a record runs', async () => {
      const notification = cardAdded();
      const [seconds] = (await client.command('TIME')) as [string, string];
      const record = JSON.stringify({ succeeded: ['CardStore.save'], failures: {} });
      await write(notification, `claim:running\n${Number(seconds) * 1000 + 60_000}\n${record}`, 'PX', '60000');

      expect((await deliver(notification)).status).toBe(409);
      expect(runs()).toEqual([[], []]);
    });

    it('runs every handler when the record cannot be read', async () => {
      const notification = cardAdded();
      await write(notification, 'record:{"succeeded":"CardStore.save"}', 'PX', '60000');

      const reply = await deliver(notification);

      expect([reply.status, reply.body]).toEqual([200, ACK]);
      expect(runs()).toEqual([[1], [1]]);
    });
  });
});
