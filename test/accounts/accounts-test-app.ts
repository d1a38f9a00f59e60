import type { DynamicModule } from '@nestjs/common';
import { PayoutsModule } from 'nestjs-payouts';
import type {
  AccessTokenSource,
  NotificationsOptions,
  PayoutsModuleExtras,
  PayoutsModuleOptions,
} from 'nestjs-payouts';

export type RegistrationMethod = 'forRoot' | 'forRootAsync';
export const REGISTRATION_METHODS: readonly RegistrationMethod[] = ['forRoot', 'forRootAsync'];

/** One merchant account of the tests: its credentials and its own notification route and secret. */
export interface TestAccount {
  readonly name: string;
  readonly apiKey: string;
  readonly secret: string;
  readonly path: string;
}

export const EU: TestAccount = {
  name: 'eu',
  apiKey: 'eu-api-key-51c0d7',
  secret: 'eu-notifications-secret-7c1d',
  path: 'payouts/eu/notifications',
};

export const KE: TestAccount = {
  name: 'ke',
  apiKey: 'ke-api-key-0a93be',
  secret: 'ke-notifications-secret-2b9e',
  path: 'payouts/ke/notifications',
};

/** The unnamed registration, on the default route. */
export const UNNAMED: TestAccount = {
  name: 'default',
  apiKey: 'default-api-key-6f2a90',
  secret: 'default-notifications-secret-94e3',
  path: 'payouts/notifications',
};

/** Where nothing listens: for apps whose tests make no payout. */
export const UNUSED_BASE_URL = 'http://127.0.0.1:9/v1';

/** The account's options against `baseUrl`: its own key, token, route and secret; tiny retry delays. */
export function accountOptions(
  account: TestAccount,
  baseUrl: string,
  overrides: { accessToken?: AccessTokenSource; notifications?: NotificationsOptions | false } = {},
): PayoutsModuleOptions {
  return {
    baseUrl,
    apiKey: account.apiKey,
    accessToken: overrides.accessToken ?? `${account.name}-static-token`,
    retries: { baseDelayMs: 1, maxDelayMs: 5 },
    notifications: overrides.notifications ?? {
      path: account.path,
      verification: { secret: { value: account.secret } },
    },
  };
}

/**
 * A registration as an app writes it: `forRoot({ name, ...options })`, or `forRootAsync({ name, useFactory })` with
 * `name` and `isGlobal` beside the factory. No `name` registers the unnamed account.
 */
export function registration(
  method: RegistrationMethod,
  extras: PayoutsModuleExtras,
  options: PayoutsModuleOptions,
): DynamicModule {
  return method === 'forRoot'
    ? PayoutsModule.forRoot({ ...extras, ...options })
    : PayoutsModule.forRootAsync({ ...extras, useFactory: async () => options });
}

/** The URL of `account`'s route on a running app, with the secret in the query string. */
export function routeOf(url: (path: string) => string, account: TestAccount, secret = account.secret): string {
  return `${url(account.path)}?token=${secret}`;
}

/** An `accessToken` function that hands out `<prefix>-1`, `<prefix>-2`, … and counts its calls. */
export function countingTokenSource(prefix: string): { source: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    source: async () => `${prefix}-${++calls}`,
    calls: () => calls,
  };
}
