import { Injectable } from '@nestjs/common';
import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import type { PayoutsRegistration, PayoutsRegistrations } from '../interfaces/payouts-registrations.interface.js';
import { DEFAULT_PAYOUTS_ACCOUNT } from '../payouts.constants.js';

/**
 * Where the `PayoutsModule` registrations of one app meet: each records itself once its options are resolved, and
 * a second registration of an account, or of a route, fails the bootstrap naming both.
 */
@Injectable()
export class PayoutsRegistry implements PayoutsRegistrations {
  readonly #byAccount = new Map<string, PayoutsRegistration>();
  readonly #byRoute = new Map<string, PayoutsRegistration>();
  readonly #byStorage = new Map<string, PayoutsRegistration>();

  get all(): readonly PayoutsRegistration[] {
    return [...this.#byAccount.values()];
  }

  find(account: string): PayoutsRegistration | undefined {
    return this.#byAccount.get(account);
  }

  record(registration: PayoutsRegistration): void {
    const sameAccount = this.#byAccount.get(registration.account);
    if (sameAccount) throw accountClash(sameAccount, registration);
    const route = registration.notificationsPath === undefined ? undefined : routeKey(registration.notificationsPath);
    const sameRoute = route === undefined ? undefined : this.#byRoute.get(route);
    if (sameRoute) throw routeClash(sameRoute, registration);
    const storage = registration.notificationsStorage;
    const sameStorage = storage === undefined ? undefined : this.#byStorage.get(storage);
    if (sameStorage) throw storageClash(sameStorage, registration);
    this.#byAccount.set(registration.account, registration);
    if (route !== undefined) this.#byRoute.set(route, registration);
    if (storage !== undefined) this.#byStorage.set(storage, registration);
  }
}

/** Paths that one adapter or the other would serve as the same route: Express ignores case and a trailing slash. */
function routeKey(path: string): string {
  return path.split('/').filter(Boolean).join('/').toLowerCase();
}

function described(registration: PayoutsRegistration): string {
  const { registeredWith, notificationsPath } = registration;
  return notificationsPath === undefined
    ? `${registeredWith} (no notification route)`
    : `${registeredWith} (route /${routeKey(notificationsPath)})`;
}

function accountClash(first: PayoutsRegistration, second: PayoutsRegistration): PayoutsConfigError {
  const both = `${described(first)} and ${described(second)}`;
  if (first.account === DEFAULT_PAYOUTS_ACCOUNT) {
    return new PayoutsConfigError(
      'name',
      `one unnamed registration (account 'default') per app, but ${both} are both that one. Register PayoutsModule ` +
        'once, in the root module (isGlobal: true makes its PayoutsService injectable in every module); for several ' +
        "merchant accounts, give each registration its own name, such as { name: 'eu' }",
    );
  }
  return new PayoutsConfigError(
    'name',
    `a name no other registration of the app has, but ${both} are both named '${first.account}'`,
  );
}

function routeClash(first: PayoutsRegistration, second: PayoutsRegistration): PayoutsConfigError {
  const named = second.account === DEFAULT_PAYOUTS_ACCOUNT ? first : second;
  return new PayoutsConfigError(
    'notifications.path',
    `a path no other registration of the app uses, but ${first.registeredWith} and ${second.registeredWith} both ` +
      `receive notifications at /${routeKey(second.notificationsPath!)}: give each account its own path, such as ` +
      `'payouts/${named.account}/notifications'`,
  );
}

/** Two accounts on one queue: each one's workers would take the other's notifications and run them as their own. */
function storageClash(first: PayoutsRegistration, second: PayoutsRegistration): PayoutsConfigError {
  return new PayoutsConfigError(
    'notifications.dispatcher',
    `a queue no other registration of the app uses, but ${first.registeredWith} and ${second.registeredWith} both ` +
      `store notifications in ${second.notificationsStorage}, so each account's workers would run the other's ` +
      `notifications as their own: give each account its own queueName (or leave it out: each account then has ` +
      `its own queue), or its own prefix`,
  );
}
