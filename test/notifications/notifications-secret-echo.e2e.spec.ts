import { afterEach, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';

const SECRET = 'echo-secret-5e1f0a7b';

/*
 * A mistyped notification URL reaches the app's own 404, which Nest words with the whole URL, query string included:
 * a secret in the query travels back to the sender (and into its logs and alert e-mails), one in a header does not.
 * This is why docs/production.md recommends the header form in production.
 */
describe.each(ADAPTERS)("the secret in the app's 404 on %s", (adapter) => {
  let running: NotificationsApp | undefined;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(secret: { header?: string }): Promise<NotificationsApp> {
    running = await startNotificationsApp({
      adapter,
      notifications: { verification: { secret: { value: SECRET, ...secret } } },
      providers: [CardEvents],
    });
    return running;
  }

  it('is echoed from the query string for a mistyped path', async () => {
    await start({});
    const reply = await post(running!.url(`payouts/notification?token=${SECRET}`), cardAdded());
    expect(reply.status).toBe(404);
    expect(reply.body).toContain(SECRET);
  });

  it('stays out of the 404 when it travels in a header', async () => {
    await start({ header: 'x-notifications-token' });
    const reply = await post(running!.url('payouts/notification'), cardAdded(), {
      headers: { 'x-notifications-token': SECRET },
    });
    expect(reply.status).toBe(404);
    expect(reply.body).not.toContain(SECRET);
  });
});
