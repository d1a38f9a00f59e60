import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NOTIFICATION_DEDUPE_STORE,
  type NotificationClaim,
  type NotificationDedupeStore,
  PayoutsModule,
} from 'nestjs-payouts';
import { cardAdded, post, startNotificationsApp, type NotificationsApp } from './notifications-test-app.js';
import { CardEvents } from './notification-handlers.fixture.js';

/** A store that records every call, including the lifecycle hooks Nest runs on providers. */
class RecordingStore implements NotificationDedupeStore {
  readonly calls: string[] = [];
  onModuleInit(): void {
    this.calls.push('onModuleInit');
  }
  onApplicationShutdown(): void {
    this.calls.push('onApplicationShutdown');
  }
  claim(key: string): NotificationClaim {
    this.calls.push(`claim ${key}`);
    return 'claimed';
  }
  complete(key: string): void {
    this.calls.push(`complete ${key}`);
  }
  release(key: string): void {
    this.calls.push(`release ${key}`);
  }
}

const NOTIFICATIONS = { verification: 'none' } as const;
const PAYOUTS_OPTIONS = { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'test-api-key', accessToken: 'test-token' };
const NOTIFICATION = cardAdded({
  shopper: { id: 'shp_1' },
  paymentMethod: {
    id: 'pmt_1',
    type: 'card',
    card: { lastFour: '4242', expirationMonth: '04', expirationYear: '2031' },
  },
});
const KEY = 'PAYMENT_METHOD_ADDED:shp_1:pmt_1:2025-03-14T09%3A26%3A53.589Z';

describe('the dedupe store is a provider of the registration', () => {
  let running: NotificationsApp | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('gets the lifecycle hooks Nest runs on providers when it is given in the options', async () => {
    const store = new RecordingStore();
    running = await startNotificationsApp({
      adapter: 'express',
      notifications: { ...NOTIFICATIONS, dedupe: { store } },
      providers: [CardEvents],
    });
    const reply = await post(running.url('payouts/notifications'), NOTIFICATION);
    await running.close();
    running = undefined;

    expect(reply.status).toBe(200);
    expect(store.calls).toEqual(['onModuleInit', `claim ${KEY}`, `complete ${KEY}`, 'onApplicationShutdown']);
  });

  it('can be replaced with overrideProvider, as any provider can', async () => {
    const store = new RecordingStore();
    const moduleRef = await Test.createTestingModule({
      imports: [PayoutsModule.forRoot({ ...PAYOUTS_OPTIONS, notifications: NOTIFICATIONS })],
      providers: [CardEvents],
    })
      .overrideProvider(NOTIFICATION_DEDUPE_STORE)
      .useValue(store)
      .compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const { port } = app.getHttpServer().address() as { port: number };
      const reply = await post(`http://127.0.0.1:${port}/payouts/notifications`, NOTIFICATION);
      expect(reply).toMatchObject({ status: 200, body: '{"ResultCode":0}' });
      expect(store.calls).toContain(`claim ${KEY}`);
      expect(store.calls).toContain(`complete ${KEY}`);
    } finally {
      await app.close();
    }
  });
});
