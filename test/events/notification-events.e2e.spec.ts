import { afterEach, describe, expect, it } from 'vitest';
import { PayoutsService, type PayoutsNotificationEvent } from 'nestjs-payouts';
import { CardEvents } from '../notifications/notification-handlers.fixture.js';
import {
  ADAPTERS,
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';

const SECRET = 'notification-secret-events-41x';

describe.each(ADAPTERS)("PayoutsService's notification events on %s", (adapter) => {
  let running: NotificationsApp | undefined;
  let events: PayoutsNotificationEvent[];

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(): Promise<NotificationsApp> {
    running = await startNotificationsApp({
      adapter,
      notifications: { verification: { secret: { value: SECRET } } },
      providers: [CardEvents],
    });
    events = [];
    running.app.get(PayoutsService).on('notification', (event) => events.push(event));
    return running;
  }

  const deliver = (body: unknown, token = SECRET) => post(running!.url(`payouts/notifications?token=${token}`), body);

  it('tells each request to the route by its outcome, once its reply is sent', async () => {
    const app = await start();
    const body = cardAdded();

    await deliver(body);
    await deliver(body);
    await deliver(cardAdded(), 'wrong-token');
    await deliver({ eventType: 'PAYMENT_METHOD_ADDED' });
    app.app.get(CardEvents).behaviour = () => {
      throw new Error('card store down');
    };
    await deliver(cardAdded());

    const common = { account: 'default', elapsedMs: expect.any(Number) };
    expect(events).toEqual([
      { ...common, eventType: 'PAYMENT_METHOD_ADDED', outcome: 'acknowledged', dedupe: 'claimed' },
      { ...common, eventType: 'PAYMENT_METHOD_ADDED', outcome: 'duplicate', dedupe: 'handled' },
      { ...common, eventType: undefined, outcome: 'unauthorized', dedupe: undefined },
      { ...common, eventType: undefined, outcome: 'invalid', dedupe: undefined },
      { ...common, eventType: 'PAYMENT_METHOD_ADDED', outcome: 'failed', dedupe: 'claimed' },
    ]);
  });

  it('says nothing of the dedupe store for an event type no handler takes', async () => {
    await start();

    await deliver(cardAdded({ eventType: 'PAYMENT_METHOD_EXPIRED' }));

    expect(events).toEqual([
      expect.objectContaining({ eventType: 'PAYMENT_METHOD_EXPIRED', outcome: 'acknowledged', dedupe: undefined }),
    ]);
  });
});
