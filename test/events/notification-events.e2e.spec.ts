import { afterEach, describe, expect, it, vi } from 'vitest';
import { PayoutsService, type PayoutsNotificationEvent } from 'nestjs-payouts';
import { CardEvents, deferred } from '../notifications/notification-handlers.fixture.js';
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

  it('tells a delivery refused while another runs the handlers, and the refusals of media type and size', async () => {
    const app = await start();
    const held = deferred();
    app.app.get(CardEvents).behaviour = () => held.promise;
    const body = cardAdded();

    const first = deliver(body);
    await vi.waitFor(() => expect(app.app.get(CardEvents).received).toHaveLength(1), { timeout: 10_000 });
    expect((await deliver(body)).status).toBe(409);
    held.resolve();
    expect((await first).status).toBe(200);
    const url = running!.url(`payouts/notifications?token=${SECRET}`);
    expect((await post(url, 'ResultCode=0', { headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    // Over the route's 64 KiB, under the framework's own body limit, which would refuse it before the route.
    expect((await post(url, { padding: 'x'.repeat(80_000) })).status).toBe(413);

    expect(events.map(({ outcome, dedupe }) => [outcome, dedupe])).toEqual([
      ['in_progress', 'in_progress'],
      ['acknowledged', 'claimed'],
      ['unsupported_media_type', undefined],
      ['too_large', undefined],
    ]);
  });
});
