import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import { InMemoryNotificationDedupeStore } from 'nestjs-payouts';

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

  describe('records of the handlers that succeeded', () => {
    const record = { succeeded: ['CardStore.save'], failures: { 'Mailer.send': 1 } };

    it('keeps the record of a released claim, answers it to the next claim, and drops it once handled', () => {
      const store = new InMemoryNotificationDedupeStore();
      expect(store.claimWithRecord('a', 'first')).toBe('claimed');
      store.releaseWithRecord('a', 'first', record);
      expect(store.claimWithRecord('a', 'second')).toEqual({ claim: 'claimed', record });
      expect(store.claimWithRecord('a', 'third')).toBe('in-progress');
      // A plain release of a claim that found a record keeps that record.
      store.release('a', 'second');
      expect(store.claim('a', 'fourth')).toBe('claimed');
      store.complete('a');
      expect(store.claimWithRecord('a', 'fifth')).toBe('handled');
      expect(store.size).toBe(1);
    });

    it("ignores another delivery's release with a record", () => {
      const store = new InMemoryNotificationDedupeStore();
      store.claimWithRecord('a', 'live');
      store.releaseWithRecord('a', 'late', record);
      expect(store.claimWithRecord('a', 'other')).toBe('in-progress');
      store.release('a', 'live');
      expect(store.claimWithRecord('a', 'next')).toBe('claimed');
    });

    it('forgets a record after ttlMs, like a handled key', () => {
      const { time, now } = clock();
      const store = new InMemoryNotificationDedupeStore({ ttlMs: 1000, now });
      store.claimWithRecord('a', 'first');
      store.releaseWithRecord('a', 'first', record);
      time.now += 999;
      expect(store.claimWithRecord('a', 'second')).toEqual({ claim: 'claimed', record });
      store.release('a', 'second');
      time.now += 1000;
      expect(store.claimWithRecord('a', 'third')).toBe('claimed');
    });

    it('evicts a record with its key when full, oldest first, and keeps the bound', () => {
      const store = new InMemoryNotificationDedupeStore({ maxEntries: 2 });
      store.claimWithRecord('a', 'first');
      store.releaseWithRecord('a', 'first', record);
      store.claim('b');
      store.complete('b');
      store.claim('c');
      expect(store.size).toBe(2);
      expect(store.claimWithRecord('a', 'second')).toBe('claimed');
    });
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

  it('keeps claims whose handlers are running and evicts the oldest handled key instead', () => {
    const store = new InMemoryNotificationDedupeStore({ maxEntries: 3 });
    store.claim('running');
    for (const key of ['a', 'b']) {
      store.claim(key);
      store.complete(key);
    }
    expect(store.claim('c')).toBe('claimed');
    expect(store.size).toBe(3);
    expect(store.claim('running')).toBe('in-progress');
    expect(store.claim('c')).toBe('in-progress');
    expect(store.claim('b')).toBe('handled');
    expect(store.claim('a')).toBe('claimed');
  });

  it('drops the oldest claim when every remembered key is a running claim', () => {
    const store = new InMemoryNotificationDedupeStore({ maxEntries: 2 });
    store.claim('a');
    store.claim('b');
    expect(store.claim('c')).toBe('claimed');
    expect(store.size).toBe(2);
    expect(store.claim('b')).toBe('in-progress');
    expect(store.claim('c')).toBe('in-progress');
    // `a` was forgotten, so a re-send of it is claimed again (and evicts `b`, now the oldest claim).
    expect(store.claim('a')).toBe('claimed');
    expect(store.claim('b')).toBe('claimed');
  });

  it('records a completion whose claim was evicted, within the bound', () => {
    const store = new InMemoryNotificationDedupeStore({ maxEntries: 2 });
    store.claim('a');
    store.claim('b');
    store.claim('c');
    store.complete('a');
    expect(store.size).toBe(2);
    expect(store.claim('a')).toBe('handled');
    expect(store.claim('c')).toBe('in-progress');
    expect(store.claim('b')).toBe('claimed');
  });

  it('claims a released key again and completes the new claim', () => {
    const store = new InMemoryNotificationDedupeStore({ maxEntries: 2 });
    store.claim('a');
    store.release('a');
    store.release('a');
    expect(store.size).toBe(0);
    expect(store.claim('a')).toBe('claimed');
    store.complete('a');
    expect(store.size).toBe(1);
    expect(store.claim('a')).toBe('handled');
  });

  it("releases only the caller's own claim, not a later delivery's claim of the same key", () => {
    const store = new InMemoryNotificationDedupeStore({ maxEntries: 1 });
    expect(store.claim('a', 'first')).toBe('claimed');
    store.release('a', 'someone-else');
    expect(store.claim('a', 'second')).toBe('in-progress');
    // Full: claiming `b` evicts the first claim of `a`, and a re-send of `a` claims it anew (evicting `b`).
    expect(store.claim('b', 'third')).toBe('claimed');
    expect(store.claim('a', 'fourth')).toBe('claimed');
    store.release('a', 'first');
    expect(store.claim('a', 'fifth')).toBe('in-progress');
    store.release('a', 'fourth');
    expect(store.claim('a', 'sixth')).toBe('claimed');
  });

  it('tells a claim made with a claim id from one made without: each is released only the way it was made', () => {
    const store = new InMemoryNotificationDedupeStore();
    expect(store.claim('a')).toBe('claimed');
    store.release('a', 'first');
    expect(store.claim('a', 'second')).toBe('in-progress');
    store.release('a');
    expect(store.claim('a', 'third')).toBe('claimed');
    store.release('a');
    expect(store.claim('a', 'fourth')).toBe('in-progress');
    store.releaseWithRecord('a', 'fourth', { succeeded: [], failures: {} });
    expect(store.claim('a', 'third')).toBe('in-progress');
    store.release('a', 'third');
    expect(store.claimWithRecord('a', 'fifth')).toBe('claimed');
    store.complete('a');
    expect(store.claim('a')).toBe('handled');
  });

  it('keeps a handled mark when a late delivery releases its claim', () => {
    const store = new InMemoryNotificationDedupeStore();
    store.claim('a', 'first');
    store.complete('a');
    store.release('a', 'second');
    store.release('a', 'first');
    expect(store.claim('a', 'third')).toBe('handled');
  });

  it('treats a completion after the ttl as a new entry, remembered for a full ttl again', () => {
    const { time, now } = clock();
    const store = new InMemoryNotificationDedupeStore({ ttlMs: 100, now });
    store.claim('a');
    store.complete('a');
    time.now += 100;
    expect(store.claim('a')).toBe('claimed');
    time.now += 50;
    store.complete('a');
    time.now += 99;
    expect(store.claim('a')).toBe('handled');
    expect(store.size).toBe(1);
    time.now += 1;
    expect(store.claim('a')).toBe('claimed');
  });

  it('stays within maxEntries over many notifications, remembering the most recent ones', () => {
    const maxEntries = 100;
    const store = new InMemoryNotificationDedupeStore({ maxEntries });
    let largest = 0;
    for (let sequence = 0; sequence < 10_000; sequence++) {
      const key = `n${sequence}`;
      store.claim(key);
      largest = Math.max(largest, store.size);
      // Every tenth handling fails and is released, as the route does, leaving stale records behind.
      if (sequence % 10 === 0) store.release(key);
      else store.complete(key);
      largest = Math.max(largest, store.size);
    }
    expect(largest).toBe(maxEntries);
    expect(store.size).toBe(maxEntries);
    expect(store.claim('n9999')).toBe('handled');
    expect(store.claim('n9800')).toBe('claimed');
  });

  it('forgets the oldest handled keys 1/256 of maxEntries at a time once full', () => {
    const store = new InMemoryNotificationDedupeStore({ maxEntries: 1000 });
    for (let sequence = 0; sequence < 1000; sequence++) {
      store.claim(`n${sequence}`);
      store.complete(`n${sequence}`);
    }
    expect(store.size).toBe(1000);
    store.claim('next');
    // ceil(1000 / 256) = 4 keys go at once, so the next three notifications find room without evicting.
    expect(store.size).toBe(997);
    expect(['n4', 'n999', 'n3', 'n0', 'n1'].map((key) => store.claim(key))).toEqual([
      'handled',
      'handled',
      'claimed',
      'claimed',
      'claimed',
    ]);
    expect(store.size).toBe(1000);
  });

  it('forgets expired keys as notifications keep arriving', () => {
    const { time, now } = clock();
    const timed = new InMemoryNotificationDedupeStore({ ttlMs: 10, maxEntries: 1000, now });
    for (let sequence = 0; sequence < 5000; sequence++) {
      time.now += 1;
      timed.claim(`n${sequence}`);
      timed.complete(`n${sequence}`);
      expect(timed.size).toBeLessThanOrEqual(10);
    }
    expect(timed.claim('n4999')).toBe('handled');
    expect(timed.claim('n4989')).toBe('claimed');
  });

  it('behaves like a plain model of its rules over any sequence of operations', () => {
    const operation = fc.record({
      kind: fc.constantFrom('claim', 'claim', 'complete', 'release'),
      key: fc.integer({ min: 0, max: 12 }).map((n) => `k${n}`),
      advanceMs: fc.constantFrom(0, 0, 1, 7, 40),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(operation, { maxLength: 300 }), (maxEntries, operations) => {
        const { time, now } = clock();
        const store = new InMemoryNotificationDedupeStore({ ttlMs: 50, maxEntries, now });
        const model = new DedupeModel(50, maxEntries);
        for (const { kind, key, advanceMs } of operations) {
          time.now += advanceMs;
          if (kind === 'claim') expect(store.claim(key)).toBe(model.claim(key, time.now));
          else if (kind === 'complete') {
            store.complete(key);
            model.complete(key, time.now);
          } else {
            store.release(key);
            model.release(key);
          }
          expect(store.size).toBe(model.size);
          expect(store.size).toBeLessThanOrEqual(maxEntries);
        }
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    [{ ttlMs: 0 }, 'InMemoryNotificationDedupeStore option "ttlMs"'],
    [{ ttlMs: 1.5 }, 'InMemoryNotificationDedupeStore option "ttlMs"'],
    [{ maxEntries: -1 }, 'InMemoryNotificationDedupeStore option "maxEntries"'],
  ])('rejects %o, naming its own option rather than a module option', (options, option) => {
    expect(() => new InMemoryNotificationDedupeStore(options)).toThrow(PayoutsConfigError);
    expect(() => new InMemoryNotificationDedupeStore(options)).toThrow(option);
  });
});

/**
 * The store's rules written as plainly as possible, scanning everything on each call: `Map`s keep insertion order,
 * and a handled key is re-inserted whenever its expiry changes.
 */
class DedupeModel {
  readonly handled = new Map<string, number>();
  readonly claims = new Set<string>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.handled.size + this.claims.size;
  }

  claim(key: string, now: number): string {
    if (this.claims.has(key)) return 'in-progress';
    const expiresAt = this.handled.get(key);
    if (expiresAt !== undefined && expiresAt > now) return 'handled';
    this.handled.delete(key);
    this.makeRoom(now);
    this.claims.add(key);
    return 'claimed';
  }

  complete(key: string, now: number): void {
    if (!this.claims.delete(key) && !this.handled.has(key)) this.makeRoom(now);
    const expiresAt = now + this.ttlMs;
    if (this.handled.get(key) === expiresAt) return;
    this.handled.delete(key);
    this.handled.set(key, expiresAt);
  }

  release(key: string): void {
    this.claims.delete(key);
  }

  private makeRoom(now: number): void {
    for (const [key, expiresAt] of this.handled) {
      if (expiresAt <= now) this.handled.delete(key);
    }
    if (this.size < this.maxEntries) return;
    const oldestHandled = this.handled.keys().next();
    if (!oldestHandled.done) this.handled.delete(oldestHandled.value);
    else this.claims.delete(this.claims.values().next().value!);
  }
}
