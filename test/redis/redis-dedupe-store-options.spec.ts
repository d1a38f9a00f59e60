import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { PayoutsConfigError } from '../../lib/index.js';
import { RedisNotificationDedupeStore, type RedisNotificationDedupeStoreOptions } from '../../lib/redis/index.js';

// Options are checked when the store is built, before it sends anything: a client that never connects will do.
const client = createClient({ url: 'redis://127.0.0.1:1' });
const construct = (options: object) => () =>
  new RedisNotificationDedupeStore(client, options as RedisNotificationDedupeStoreOptions);

describe('RedisNotificationDedupeStore options', () => {
  it.each([
    ['leaseMS', 'a known option name (did you mean "leaseMs"?)'],
    ['handledTtl', 'a known option name (did you mean "handledTtlMs"?)'],
    ['commandTimeout', 'a known option name (did you mean "commandTimeoutMs"?)'],
    ['keyPrefix', 'a known option name (did you mean "prefix"?)'],
    ['database', 'one of prefix, leaseMs, handledTtlMs, commandTimeoutMs'],
  ])('refuses an unknown option %s, naming the store and the closest known name', (name, expected) => {
    expect(construct({ [name]: 1_000 })).toThrow(
      expect.objectContaining({ constructor: PayoutsConfigError, option: name }),
    );
    expect(construct({ prefix: 'shop:', [name]: 1_000 })).toThrow(
      `RedisNotificationDedupeStore option "${name}" is invalid: expected ${expected}.`,
    );
  });

  it('takes every known option', () => {
    expect(construct({ prefix: 'shop:', leaseMs: 60_000, handledTtlMs: 900_000, commandTimeoutMs: 250 })).not.toThrow();
    expect(construct({})).not.toThrow();
  });
});
