import { ConfigProblems } from '../common/config-problems.js';
import { optionKeys } from '../common/known-option-keys.js';
import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import type { PayoutsTelemetry } from '../interfaces/payouts-instrumentation.interface.js';
import type { PayoutsModuleExtras, PayoutsModuleOptions } from '../interfaces/payouts-module-options.interface.js';
import { type NotificationsConfig, resolveNotificationsConfig } from '../notifications/notifications-config.js';
import {
  PAYOUTS_CLIENT_OPTION_KEYS,
  type PayoutsClientConfig,
  resolvePayoutsClientConfig,
} from '../payouts/payouts-client-config.js';
import { resolvePayoutsAccount } from './payouts-account.js';
import { resolvePayoutsTelemetry } from './payouts-telemetry.js';

/** The top-level options no client setting reads; with the client's, every key of `PayoutsModuleOptions`. */
const OTHER_OPTION_KEYS = optionKeys<Pick<PayoutsModuleOptions, 'notifications' | 'telemetry'>>()(
  'notifications',
  'telemetry',
);
const OPTION_KEYS = [...PAYOUTS_CLIENT_OPTION_KEYS, ...OTHER_OPTION_KEYS];
/** Options of the registration itself, read before any options factory runs. */
const EXTRA_KEYS = optionKeys<PayoutsModuleExtras>()('isGlobal', 'name');

/** The module's options after validation: one slice per feature, each read only by its own feature. */
export interface PayoutsConfig {
  /** The registration's `name`, or `'default'`. */
  readonly account: string;
  readonly client: PayoutsClientConfig;
  readonly notifications: NotificationsConfig | false;
  /** What builds the registration's instrumentation; undefined for none. */
  readonly telemetry: PayoutsTelemetry | undefined;
}

/**
 * Validates the user's options once, at bootstrap, so a bad value fails the app before any request; every problem is
 * reported at once. `name` comes from beside the options (`forRoot` separates it; `forRootAsync` takes it outside the
 * factory).
 */
export function resolvePayoutsConfig(options: PayoutsModuleOptions | undefined, name: unknown): PayoutsConfig {
  if (options === null || typeof options !== 'object') {
    throw new PayoutsConfigError('options', 'an object with baseUrl, apiKey and accessToken');
  }
  const problems = new ConfigProblems(options, OPTION_KEYS);
  const account = problems.check(() => resolvePayoutsAccount(name));
  problems.check(() => rejectMisplacedExtras(options));
  const client = problems.check(() => resolvePayoutsClientConfig(options));
  const notifications = problems.check(() => resolveNotificationsConfig(options.notifications));
  const telemetry = problems.check(() => resolvePayoutsTelemetry(options.telemetry));
  // After the slices, whose own checks word some known mistakes better (`maxRedirects` says why it is refused), and
  // name a required option spelt otherwise (`apikey`) as missing.
  problems.checkUnknownKeys();
  problems.throwIfAny();
  return { account, client, notifications, telemetry };
}

/**
 * Only an options factory (`useFactory`, `useClass`) can return `name` or `isGlobal`: by the time it runs, the
 * injection token and the route already exist, so they must sit beside it.
 */
function rejectMisplacedExtras(options: object): void {
  const misplaced = EXTRA_KEYS.find((key) => Object.hasOwn(options, key));
  if (misplaced) {
    throw new PayoutsConfigError(
      misplaced,
      `${misplaced} beside the factory, as in PayoutsModule.forRootAsync({ ${misplaced}: …, useFactory }), ` +
        'not in the options the factory returns',
    );
  }
}
