import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import { DEFAULT_PAYOUTS_ACCOUNT } from '../payouts.constants.js';

/**
 * Names end up in injection tokens, log lines, dedupe keys (`eu/…`) and shared-store keys, so they keep to
 * characters that need no escaping anywhere and cannot contain the key's separators (`/`, `:`).
 */
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The registration's account: its `name`, or the default account when it has none. */
export function resolvePayoutsAccount(name: unknown): string {
  if (name === undefined) return DEFAULT_PAYOUTS_ACCOUNT;
  if (typeof name !== 'string' || !ACCOUNT_NAME.test(name)) {
    throw new PayoutsConfigError(
      'name',
      'up to 64 letters, digits, "-", "_" or ".", starting with a letter or digit, such as "eu" or "merchant-42"',
    );
  }
  return name;
}
