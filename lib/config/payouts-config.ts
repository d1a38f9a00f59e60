import { rejectUnknownKeys } from '../common/known-option-keys.js';
import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import type { PayoutsModuleOptions } from '../interfaces/payouts-module-options.interface.js';
import { type NotificationsConfig, resolveNotificationsConfig } from '../notifications/notifications-config.js';
import {
  PAYOUTS_CLIENT_OPTION_KEYS,
  type PayoutsClientConfig,
  resolvePayoutsClientConfig,
} from '../payouts/payouts-client-config.js';

const OPTION_KEYS = [...PAYOUTS_CLIENT_OPTION_KEYS, 'notifications'];

/** The module's options after validation: one slice per feature, each read only by its own feature. */
export interface PayoutsConfig {
  readonly client: PayoutsClientConfig;
  readonly notifications: NotificationsConfig | false;
}

/** Validates the user's options once, at bootstrap, so a bad value fails the app before any request. */
export function resolvePayoutsConfig(options: PayoutsModuleOptions | undefined): PayoutsConfig {
  if (options === null || typeof options !== 'object') {
    throw new PayoutsConfigError('options', 'an object with baseUrl, apiKey and accessToken');
  }
  rejectUnknownKeys(options, OPTION_KEYS, '');
  return {
    client: resolvePayoutsClientConfig(options),
    notifications: resolveNotificationsConfig(options.notifications),
  };
}
