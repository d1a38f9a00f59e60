import { inspect } from 'node:util';
import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { OnPaymentMethodAdded, PayoutsConfigError, PayoutsModule } from 'nestjs-payouts';
import type { PayoutsModuleOptions } from 'nestjs-payouts';
import {
  ADAPTERS,
  bootError,
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';
import { EuCards } from './account-handlers.fixture.js';
import {
  accountOptions,
  EU,
  KE,
  REGISTRATION_METHODS,
  registration,
  routeOf,
  type TestAccount,
  UNNAMED,
  UNUSED_BASE_URL,
} from './accounts-test-app.js';

@Injectable()
class NoAccountEvents {
  @OnPaymentMethodAdded({ account: [] })
  added(): void {}
}

const SECRETS = [EU, KE, UNNAMED].flatMap((account) => [account.secret, account.apiKey]);

/** A `PayoutsConfigError`, whose every rendering leaves the secrets and keys of the options out. */
function configError(error: unknown): PayoutsConfigError {
  expect(error).toBeInstanceOf(PayoutsConfigError);
  for (const rendering of [(error as Error).message, JSON.stringify(error), inspect(error)]) {
    for (const secret of SECRETS) expect(rendering).not.toContain(secret);
  }
  return error as PayoutsConfigError;
}

const options = (account: TestAccount, path = account.path): PayoutsModuleOptions =>
  accountOptions(account, UNUSED_BASE_URL, {
    notifications: { path, verification: { secret: { value: account.secret } } },
  });

describe.each(ADAPTERS.flatMap((adapter) => REGISTRATION_METHODS.map((method) => [adapter, method] as const)))(
  'clashing registrations on %s, by %s',
  (adapter, method) => {
    const registered = `PayoutsModule.${method}`;

    it('refuse two registrations of one name, naming both', async () => {
      const error = configError(
        await bootError({
          adapter,
          imports: [
            registration(method, { name: 'eu' }, options(EU)),
            registration(method, { name: 'eu' }, options(KE, 'payouts/eu-second/notifications')),
          ],
        }),
      );

      expect(error.option).toBe('name');
      expect(error.message).toMatch(/^PayoutsModule option "name" is invalid: expected a name no other registration/);
      expect(error.message).toContain(`${registered}({ name: 'eu' }) (route /payouts/eu/notifications)`);
      expect(error.message).toContain(`${registered}({ name: 'eu' }) (route /payouts/eu-second/notifications)`);
      expect(error.message).toContain("are both named 'eu'");
    });

    it('refuse the unnamed registration imported twice, and say what to do', async () => {
      const error = configError(
        await bootError({
          adapter,
          imports: [
            registration(method, {}, options(UNNAMED)),
            registration(method, {}, { ...options(UNNAMED), notifications: false }),
          ],
        }),
      );

      expect(error.option).toBe('name');
      expect(error.message).toMatch(/expected one unnamed registration \(account 'default'\) per app, but /);
      expect(error.message).toContain(`${registered}() (route /payouts/notifications)`);
      expect(error.message).toContain(`${registered}() (no notification route)`);
      expect(error.message).toContain(
        'Register PayoutsModule once, in the root module (isGlobal: true makes its PayoutsService injectable in ' +
          "every module); for several merchant accounts, give each registration its own name, such as { name: 'eu' }",
      );
    });

    it("take name 'default' for the unnamed registration", async () => {
      const error = configError(
        await bootError({
          adapter,
          imports: [registration(method, {}, options(UNNAMED)), registration(method, { name: 'default' }, options(EU))],
        }),
      );

      expect(error.message).toContain(
        `${registered}() (route /payouts/notifications) and ${registered}({ name: 'default' })`,
      );
    });

    it.each([
      ['the same path', 'payouts/notifications', 'payouts/notifications'],
      ['paths that differ in case and slashes only', 'payouts/EU/notifications/', '/payouts/eu//notifications'],
    ])('refuse two routes on %s, naming both registrations', async (_case, euPath, kePath) => {
      const error = configError(
        await bootError({
          adapter,
          imports: [
            registration(method, { name: 'eu' }, options(EU, euPath)),
            registration(method, { name: 'ke' }, options(KE, kePath)),
          ],
        }),
      );

      expect(error.option).toBe('notifications.path');
      expect(error.message).toContain(`${registered}({ name: 'eu' }) and ${registered}({ name: 'ke' }) both receive`);
      expect(error.message).toContain(`at /${euPath.replaceAll('/', ' ').trim().replaceAll(' ', '/').toLowerCase()}`);
      expect(error.message).toContain("give each account its own path, such as 'payouts/ke/notifications'");
    });

    it('refuse a handler naming an account that is not registered, naming the handler and the accounts', async () => {
      const error = configError(
        await bootError({
          adapter,
          imports: [registration(method, {}, options(UNNAMED)), registration(method, { name: 'ke' }, options(KE))],
          providers: [EuCards],
        }),
      );

      expect(error.option).toBe('account');
      expect(error.message).toBe(
        'EuCards.added option "account" is invalid: expected the name of a PayoutsModule registration of the app ' +
          "('default', 'ke'), but 'eu' is none of them.",
      );
    });

    it('refuse a handler naming an account that receives no notifications', async () => {
      const error = configError(
        await bootError({
          adapter,
          imports: [
            registration(method, { name: 'eu' }, { ...options(EU), notifications: false }),
            registration(method, { name: 'ke' }, options(KE)),
          ],
          providers: [EuCards],
        }),
      );

      expect(error.message).toBe(
        'EuCards.added option "account" is invalid: expected an account that receives notifications, but ' +
          `${registered}({ name: 'eu' }) has notifications: false.`,
      );
    });

    it('refuse a handler naming no account at all', async () => {
      const error = configError(
        await bootError({
          adapter,
          imports: [registration(method, {}, options(UNNAMED))],
          providers: [NoAccountEvents],
        }),
      );

      expect(error.message).toBe(
        `NoAccountEvents.added option "account" is invalid: expected one account name or more; omit it to receive every account's.`,
      );
    });

    it.each(['', 'eu/1', 'eu:1', ' eu', '-eu', 'x'.repeat(65)])('refuse the name %j', async (name) => {
      const error = configError(await bootError({ adapter, imports: [registration(method, { name }, options(EU))] }));

      expect(error.option).toBe('name');
      expect(error.message).toContain('up to 64 letters, digits, "-", "_" or ".", starting with a letter or digit');
    });
  },
);

describe.each(ADAPTERS)('the name of a forRootAsync registration, on %s', (adapter) => {
  it.each(['name', 'isGlobal'])('is refused inside the options the factory returns (%s)', async (extra) => {
    const error = configError(
      await bootError({
        adapter,
        imports: [PayoutsModule.forRootAsync({ useFactory: () => ({ ...options(EU), [extra]: 'eu' }) })],
      }),
    );

    expect(error.option).toBe(extra);
    expect(error.message).toContain(
      `${extra} beside the factory, as in PayoutsModule.forRootAsync({ ${extra}: …, useFactory })`,
    );
  });
});

describe.each(ADAPTERS)('two apps in one process, on %s', (adapter) => {
  const running: NotificationsApp[] = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((app) => app.close()));
  });

  it.each(REGISTRATION_METHODS)('each register the same accounts and routes without clashing (%s)', async (method) => {
    // The same module objects, as when one AppModule is bootstrapped twice.
    const imports = [
      registration(method, { name: 'eu' }, options(EU)),
      registration(method, { name: 'ke' }, options(KE)),
    ];
    for (let app = 0; app < 2; app++) {
      running.push(await startNotificationsApp({ adapter, imports, providers: [EuCards] }));
    }

    for (const app of running) {
      const reply = await post(routeOf(app.url, EU), cardAdded());
      expect(reply.status).toBe(200);
      expect(app.app.get(EuCards).received.map(({ context }) => context.account)).toEqual(['eu']);
    }
  });
});
