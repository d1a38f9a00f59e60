import { type CanActivate, type ExecutionContext, Injectable, SetMetadata, VersioningType } from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';

const IS_PUBLIC = 'test:is-public';
const Public = () => SetMetadata(IS_PUBLIC, true);

/** Like an app's global authentication guard: everything needs a login unless marked public. */
@Injectable()
class LoginRequiredGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    return this.reflector.get<boolean>(IS_PUBLIC, context.getClass()) === true;
  }
}

describe.each(ADAPTERS)('notification route on %s', (adapter) => {
  const apps: NotificationsApp[] = [];

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  async function start(options: Omit<Parameters<typeof startNotificationsApp>[0], 'adapter'>) {
    const app = await startNotificationsApp({ adapter, providers: [CardEvents], ...options });
    apps.push(app);
    return app;
  }

  describe.each([
    { registration: 'forRoot', async: false },
    { registration: 'forRootAsync', async: true },
  ])('$registration', ({ async }) => {
    it('serves the default path', async () => {
      const app = await start({ async, notifications: { verification: 'none' } });
      expect((await post(app.url('payouts/notifications'), cardAdded())).status).toBe(200);
    });

    it('serves a custom path under the global prefix', async () => {
      const app = await start({
        async,
        globalPrefix: 'api',
        notifications: { path: '/hooks/cards', verification: 'none' },
      });
      const reply = await post(app.url('api/hooks/cards'), cardAdded());
      expect(reply.status).toBe(200);
      expect(reply.body).toBe('{"ResultCode":0}');
      expect((await post(app.url('hooks/cards'), cardAdded())).status).toBe(404);
      expect(app.app.get(CardEvents).received).toHaveLength(1);
    });

    it('registers no route with notifications: false', async () => {
      const app = await start({ async, notifications: false });
      expect((await post(app.url('payouts/notifications'), cardAdded())).status).toBe(404);
      expect(app.app.get(CardEvents).received).toEqual([]);
    });
  });

  it('keeps two apps in one process on their own paths', async () => {
    const first = await start({ notifications: { path: 'first', verification: 'none' } });
    const second = await start({ async: true, notifications: { path: 'second', verification: 'none' } });
    expect((await post(first.url('first'), cardAdded())).status).toBe(200);
    expect((await post(second.url('second'), cardAdded())).status).toBe(200);
    expect((await post(first.url('second'), cardAdded())).status).toBe(404);
    expect((await post(second.url('first'), cardAdded())).status).toBe(404);
    expect(first.app.get(CardEvents).received).toHaveLength(1);
    expect(second.app.get(CardEvents).received).toHaveLength(1);
  });

  it('keeps its path when the app enables URI versioning, and can be excluded from the global prefix', async () => {
    const app = await start({
      notifications: { verification: 'none' },
      configure: (nest) => {
        nest.setGlobalPrefix('api', { exclude: ['payouts/notifications'] });
        nest.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' });
      },
    });
    expect((await post(app.url('payouts/notifications'), cardAdded())).status).toBe(200);
    expect((await post(app.url('api/v1/payouts/notifications'), cardAdded())).status).toBe(404);
  });

  it("applies the user's controller decorators, so a global guard can let the service in", async () => {
    const guarded = await start({
      providers: [CardEvents, { provide: APP_GUARD, useClass: LoginRequiredGuard }],
      notifications: { verification: 'none' },
    });
    expect((await post(guarded.url('payouts/notifications'), cardAdded())).status).toBe(403);

    const exempt = await start({
      providers: [CardEvents, { provide: APP_GUARD, useClass: LoginRequiredGuard }],
      notifications: { verification: 'none', controllerDecorators: [Public()] },
    });
    expect((await post(exempt.url('payouts/notifications'), cardAdded())).status).toBe(200);
  });
});
