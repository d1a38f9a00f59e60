import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  float64Slots,
  StampedKeyQueue,
  type StampSlots,
  arraySlots,
} from '../../lib/notifications/dedupe/stamped-key-queue.js';

/** A queue whose records are current while `entries` holds their stamp, as the dedupe store uses it. */
function queueOver(entries: Map<string, number>, slots: StampSlots<number> = float64Slots) {
  return new StampedKeyQueue((key, stamp) => entries.get(key) === stamp, slots);
}

/** Records key `k<index>` with stamp `index`, current until the test changes its entry. */
function pushCurrent(entries: Map<string, number>, queue: StampedKeyQueue, index: number): void {
  entries.set(`k${index}`, index);
  queue.push(`k${index}`, index);
}

/** Every record from the front, shifting them off, current ones only. */
function drain(queue: StampedKeyQueue): [string, number][] {
  const records: [string, number][] = [];
  while (queue.skipStale()) {
    records.push([queue.frontKey, queue.frontStamp]);
    queue.shift();
  }
  return records;
}

describe('StampedKeyQueue', () => {
  it('gives its current records back in the order pushed, skipping stale ones at the front', () => {
    const entries = new Map<string, number>();
    const queue = queueOver(entries);
    for (let index = 0; index < 10; index++) {
      pushCurrent(entries, queue, index);
    }
    entries.delete('k0');
    entries.set('k1', 99);
    entries.delete('k5');
    expect(queue.frontStampAtMost(0)).toBe(true);
    expect(queue.skipStale()).toBe(true);
    expect([queue.frontKey, queue.frontStamp]).toEqual(['k2', 2]);
    expect(queue.frontStampAtMost(1)).toBe(false);
    expect(drain(queue).map(([key]) => key)).toEqual(['k2', 'k3', 'k4', 'k6', 'k7', 'k8', 'k9']);
    expect(queue.skipStale()).toBe(false);
    expect(queue.frontStampAtMost(Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('drops stale records in place when full, keeping its capacity, rather than growing', () => {
    const entries = new Map<string, number>();
    const queue = queueOver(entries);
    // Like the store's claims: many pushed, few still current, none ever shifted off.
    for (let index = 0; index < 10_000; index++) {
      pushCurrent(entries, queue, index);
      entries.delete(`k${index - 3}`);
    }
    expect(queue.capacity).toBe(64);
    expect(queue.length).toBeLessThanOrEqual(64);
    expect(drain(queue)).toEqual([
      ['k9997', 9997],
      ['k9998', 9998],
      ['k9999', 9999],
    ]);
  });

  it('doubles once its current records fill more than half of it, keeping them in order', () => {
    const entries = new Map<string, number>();
    const queue = queueOver(entries);
    // Wrapped around the ring before it grows: the front is not at index 0.
    for (let index = 0; index < 40; index++) {
      queue.push(`old${index}`, index);
      queue.shift();
    }
    for (let index = 0; index < 65; index++) {
      pushCurrent(entries, queue, index);
    }
    expect(queue.capacity).toBe(128);
    expect(drain(queue).map(([, stamp]) => stamp)).toEqual(Array.from({ length: 65 }, (_, index) => index));
  });

  it('checks only just over half of its records when every one is current and it doubles', () => {
    const entries = new Map<string, number>();
    let checks = 0;
    const queue = new StampedKeyQueue((key, stamp) => {
      checks++;
      return entries.get(key) === stamp;
    }, float64Slots);
    for (let index = 0; index < 1000; index++) {
      pushCurrent(entries, queue, index);
    }
    // Full at 64, 128, 256 and 512 records: each time the check stops once more than half of the ring is current.
    expect(checks).toBe(33 + 65 + 129 + 257);
    expect(queue.capacity).toBe(1024);
    expect(drain(queue)).toHaveLength(1000);
  });

  it('keeps a fixed capacity once the number of current records stops growing', () => {
    const entries = new Map<string, number>();
    const queue = queueOver(entries);
    const capacities = new Set<number>();
    // A store of 1,000 keys in steady state: each new key evicts the oldest, one in ten goes stale in between.
    for (let index = 0; index < 50_000; index++) {
      pushCurrent(entries, queue, index);
      if (index % 10 === 0) entries.delete(`k${index - 500}`);
      if (entries.size > 1000 && queue.skipStale()) {
        entries.delete(queue.frontKey);
        queue.shift();
      }
      if (index >= 10_000) capacities.add(queue.capacity);
    }
    expect([...capacities]).toEqual([2048]);
  });

  it('gives its memory back once emptied', () => {
    const entries = new Map<string, number>();
    const queue = queueOver(entries);
    for (let index = 0; index < 1000; index++) {
      pushCurrent(entries, queue, index);
    }
    expect(queue.capacity).toBe(1024);
    expect(drain(queue)).toHaveLength(1000);
    expect(queue.capacity).toBe(64);
    entries.set('again', 1);
    queue.push('again', 1);
    expect(drain(queue)).toEqual([['again', 1]]);
  });

  it.each([
    ['a Float64Array', float64Slots],
    ['an array', arraySlots<number>],
  ])('behaves like an array of records filtered by what is current, its stamps in %s', (_, slots) => {
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), count: fc.integer({ min: 1, max: 80 }) }),
      fc.record({ kind: fc.constant('stale' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('shift' as const), count: fc.integer({ min: 1, max: 40 }) }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 80 }), (operations) => {
        const entries = new Map<string, number>();
        const queue = queueOver(entries, slots);
        const model: [string, number][] = [];
        let next = 0;
        let mostLive = 0;
        const current = () => model.filter(([key, stamp]) => entries.get(key) === stamp);
        for (const step of operations) {
          if (step.kind === 'push') {
            for (let count = 0; count < step.count; count++, next++) {
              entries.set(`k${next}`, next);
              queue.push(`k${next}`, next);
              model.push([`k${next}`, next]);
            }
          } else if (step.kind === 'stale') {
            const live = current();
            if (live.length > 0) entries.delete(live[step.pick % live.length]![0]);
          } else {
            for (let count = 0; count < step.count && queue.skipStale(); count++) {
              const front = current()[0]!;
              expect([queue.frontKey, queue.frontStamp]).toEqual(front);
              model.splice(model.indexOf(front), 1);
              queue.shift();
            }
          }
          const live = current().length;
          mostLive = Math.max(mostLive, live);
          expect(queue.length).toBeGreaterThanOrEqual(live);
          // Stale records never make it grow: its size follows the most current records it held at once.
          expect(queue.capacity).toBeLessThanOrEqual(Math.max(64, 4 * mostLive));
        }
        expect(drain(queue)).toEqual(current());
      }),
      { numRuns: 300 },
    );
  });
});
