import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayoutsConfigError, type PayoutsModuleOptions } from 'nestjs-payouts';
import { payoutsQueue, type PayoutsQueueOptions } from 'nestjs-payouts/queue';
import {
  accountOptions,
  EU,
  KE,
  REGISTRATION_METHODS,
  registration,
  routeOf,
  type TestAccount,
  UNUSED_BASE_URL,
} from '../accounts/accounts-test-app.js';
import { bootError, cardAdded, post, startNotificationsApp } from '../notifications/notifications-test-app.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { ACK, QueuedEvents, uniqueQueueName } from './queue-test-app.js';

describeWithRedis('queue mode with several accounts', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(() => redis?.close());

  const queued = (account: TestAccount, queue: Partial<PayoutsQueueOptions>): PayoutsModuleOptions =>
    accountOptions(account, UNUSED_BASE_URL, {
      notifications: {
        path: account.path,
        verification: { secret: { value: account.secret } },
        dispatcher: payoutsQueue({ connection: { host: '127.0.0.1', port: redis.port }, backoffMs: 50, ...queue }),
      },
    });

  describe.each(REGISTRATION_METHODS)('registered by %s', (method) => {
    it.each([
      ['one queueName', {}, {}, 'bull'],
      ['one queueName and prefix', { prefix: 'shop' }, { prefix: 'shop' }, 'shop'],
    ])('refuses two accounts given %s, naming both', async (_case, euQueue, keQueue, prefix) => {
      const queueName = uniqueQueueName();

      const error = await bootError({
        adapter: 'express',
        imports: [
          registration(method, { name: 'eu' }, queued(EU, { queueName, ...euQueue })),
          registration(method, { name: 'ke' }, queued(KE, { queueName, ...keQueue })),
        ],
        providers: [QueuedEvents],
      });

      expect(error).toBeInstanceOf(PayoutsConfigError);
      expect((error as PayoutsConfigError).option).toBe('notifications.dispatcher');
      expect((error as Error).message).toBe(
        'PayoutsModule option "notifications.dispatcher" is invalid: expected a queue no other registration of the ' +
          `app uses, but PayoutsModule.${method}({ name: 'eu' }) and PayoutsModule.${method}({ name: 'ke' }) both ` +
          `store notifications in BullMQ queue ${prefix}:${queueName}, so each account's workers would run the ` +
          "other's notifications as their own: give each account its own queueName (or leave it out: each account " +
          'then has its own queue), or its own prefix.',
      );
    });
  });

  it('runs each account with its own handlers context when one queueName has two prefixes', async () => {
    const queueName = uniqueQueueName();
    const app = await startNotificationsApp({
      adapter: 'fastify',
      imports: [
        registration('forRoot', { name: 'eu' }, queued(EU, { queueName, prefix: 'eu' })),
        registration('forRoot', { name: 'ke' }, queued(KE, { queueName, prefix: 'ke' })),
      ],
      providers: [QueuedEvents],
    });
    try {
      const notification = cardAdded();

      expect((await post(routeOf(app.url, KE), notification)).body).toBe(ACK);
      const events = app.app.get(QueuedEvents);
      await eventually(async () => (events.runs.length > 0 ? true : undefined), 10_000, 'the handler runs');

      expect(events.runs.map((run) => run.context.account)).toEqual(['ke']);
    } finally {
      await app.close();
    }
  });
});
