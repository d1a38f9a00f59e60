import { describe, expect, it } from 'vitest';
import { PayoutsConfigError } from '../../lib/errors/payouts-config.error.js';
import { InMemoryNotificationDedupeStore } from '../../lib/notifications/in-memory-notification-dedupe-store.js';

function clock(start = 1_000_000) {
  const time = { now: start };
  return { time, now: () => time.now };
}

describe('InMemoryNotificationDedupeStore', () => {
  it('claims a key once, reports it in progress, then handled', () => {
    const store = new InMemoryNotificationDedupeStore();
    expect(store.claim('a')).toBe('claimed');
    expect(store.claim('a')).toBe('in-progress');
    store.complete('a');
    expect(store.claim('a')).toBe('handled');
    expect(store.claim('b')).toBe('claimed');
  });

  it('forgets a released claim, but not a handled key', () => {
    const store = new InMemoryNotificationDedupeStore();
    store.claim('a');
    store.release('a');
    expect(store.claim('a')).toBe('claimed');
    store.complete('a');
    store.release('a');
    expect(store.claim('a')).toBe('handled');
  });

  it('forgets handled keys after ttlMs, measured by the injected clock', () => {
    const { time, now } = clock();
    const store = new InMemoryNotificationDedupeStore({ ttlMs: 1000, now });
    store.claim('a');
    store.complete('a');
    time.now += 999;
    expect(store.claim('a')).toBe('handled');
    time.now += 1;
    expect(store.claim('a')).toBe('claimed');
  });

  it('defaults to a 24-hour ttl', () => {
    const { time, now } = clock();
    const store = new InMemoryNotificationDedupeStore({ now });
    store.claim('a');
    store.complete('a');
    time.now += 24 * 60 * 60 * 1000 - 1;
    expect(store.claim('a')).toBe('handled');
    time.now += 1;
    expect(store.claim('a')).toBe('claimed');
  });

  it('prunes expired entries as new ones arrive', () => {
    const { time, now } = clock();
    const store = new InMemoryNotificationDedupeStore({ ttlMs: 100, now });
    for (const key of ['a', 'b', 'c']) {
      store.claim(key);
      store.complete(key);
    }
    time.now += 100;
    store.claim('d');
    expect(store.size).toBe(1);
  });

  it('evicts the oldest entry beyond maxEntries', () => {
    const store = new InMemoryNotificationDedupeStore({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c', 'd']) {
      store.claim(key);
      store.complete(key);
    }
    expect(store.size).toBe(3);
    expect(store.claim('b')).toBe('handled');
    expect(store.claim('c')).toBe('handled');
    expect(store.claim('d')).toBe('handled');
    expect(store.claim('a')).toBe('claimed');
  });

  it.each([
    [{ ttlMs: 0 }, 'notifications.dedupe.ttlMs'],
    [{ ttlMs: 1.5 }, 'notifications.dedupe.ttlMs'],
    [{ maxEntries: -1 }, 'notifications.dedupe.maxEntries'],
  ])('rejects %o', (options, option) => {
    expect(() => new InMemoryNotificationDedupeStore(options)).toThrow(PayoutsConfigError);
    expect(() => new InMemoryNotificationDedupeStore(options)).toThrow(option);
  });
});
