import { PayoutsConfigError } from '../errors/payouts-config.error.js';

/**
 * Reads an optional `true`/`false` option at bootstrap: `fallback` when it is absent; anything but a boolean fails
 * with a `PayoutsConfigError` naming the option (and its owner, when not the module).
 */
export function booleanOption(option: string, value: unknown, fallback: boolean, owner?: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new PayoutsConfigError(option, 'true or false', owner);
  return value;
}
