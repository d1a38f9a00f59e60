/** Smallest capacity, a power of two like every capacity. */
const MIN_CAPACITY = 64;

/** Where a queue keeps its stamps: `capacity` slots, each read only after it was written. */
export type StampSlots<Stamp> = (capacity: number) => { [index: number]: Stamp };

/**
 * Numeric stamps (expiry times) in a `Float64Array`: stored as they are, outside V8's heap. In an array, a time in
 * milliseconds, too large for a small integer, may be kept as a separate heap number per record, which every full
 * garbage collection then visits, for as long as the key is remembered.
 */
export function float64Slots(capacity: number): Float64Array {
  return new Float64Array(capacity);
}

/** Empty slots in an array: for the keys, and for stamps of any kind (claim ids, strings or numbers). */
export function arraySlots<Value>(capacity: number): Value[] {
  return Array.from<Value>({ length: capacity });
}

/**
 * Keys in arrival order, each with the stamp it was recorded with, for `InMemoryNotificationDedupeStore`.
 * A record is current while `isCurrent(key, stamp)` holds; the owner makes a record stale simply by changing or
 * deleting the key's entry, and stale records are skipped at the front or dropped when the queue is full.
 *
 * The records lie in a ring of fixed capacity: push, skip and shift are O(1) and allocate nothing. A full ring drops
 * its stale records in place, and doubles only when that frees less than half of it, so dropping is O(1) amortised
 * and a store of steady size allocates nothing for its queues. Every array the route allocates per notification and
 * keeps for a while is promoted to the old generation and brings the next full garbage collection nearer; a queue that
 * copied itself as it grew or compacted cost the route more in collections than the copies took.
 */
export class StampedKeyQueue<Stamp extends number | string = number> {
  // A slot outside the records is emptied, so that a forgotten key's string does not stay reachable.
  #keys = arraySlots<string | undefined>(MIN_CAPACITY);
  #stamps: { [index: number]: Stamp };
  /** Capacity - 1: capacities are powers of two, so `index & mask` wraps an index around the ring. */
  #mask = MIN_CAPACITY - 1;
  #head = 0;
  #length = 0;

  constructor(
    private readonly isCurrent: (key: string, stamp: Stamp) => boolean,
    private readonly newStamps: StampSlots<Stamp>,
  ) {
    this.#stamps = newStamps(MIN_CAPACITY);
  }

  /** Records in the ring, stale ones included. */
  get length(): number {
    return this.#length;
  }

  /** Slots in the ring: at most four times the current records when it last grew, and never below 64. */
  get capacity(): number {
    return this.#mask + 1;
  }

  push(key: string, stamp: Stamp): void {
    if (this.#length > this.#mask) this.#dropStaleOrGrow();
    const index = (this.#head + this.#length) & this.#mask;
    this.#keys[index] = key;
    this.#stamps[index] = stamp;
    this.#length++;
  }

  /** Drops stale records from the front; `false` when no current record is left. */
  skipStale(): boolean {
    const keys = this.#keys;
    const stamps = this.#stamps;
    while (this.#length > 0) {
      if (this.isCurrent(keys[this.#head]!, stamps[this.#head]!)) return true;
      this.shift();
    }
    return false;
  }

  /** The front record; read only after `skipStale()` returned `true`. */
  get frontKey(): string {
    return this.#keys[this.#head]!;
  }

  get frontStamp(): Stamp {
    return this.#stamps[this.#head]!;
  }

  /**
   * Whether the front record, current or stale, has a stamp at most `bound`. Stamps are pushed in non-decreasing
   * order, so when it has not, no record behind it has either: checked without looking up any key.
   */
  frontStampAtMost(bound: Stamp): boolean {
    return this.#length > 0 && this.#stamps[this.#head]! <= bound;
  }

  shift(): void {
    this.#keys[this.#head] = undefined;
    this.#head = (this.#head + 1) & this.#mask;
    if (--this.#length === 0) this.#emptied();
  }

  /** A full ring: its current records move up behind one another, in order; it doubles if they fill half of it. */
  #dropStaleOrGrow(): void {
    const keys = this.#keys;
    const stamps = this.#stamps;
    const mask = this.#mask;
    const half = (mask + 1) / 2;
    let kept = 0;
    for (let read = 0; read < this.#length; read++) {
      const from = (this.#head + read) & mask;
      const key = keys[from]!;
      const stamp = stamps[from]!;
      keys[from] = undefined;
      // Once more than half of the ring is current it doubles however many of the rest are stale: they are kept
      // unchecked (skipped at the front later), which halves the lookups of a queue that only grows.
      if (kept <= half && !this.isCurrent(key, stamp)) continue;
      // Never ahead of `from` in the ring, so no record is overwritten before it is read.
      const to = (this.#head + kept++) & mask;
      keys[to] = key;
      stamps[to] = stamp;
    }
    this.#length = kept;
    if (kept > half) this.#resize(2 * (mask + 1));
  }

  /** The records, in order from index 0, in new arrays of `capacity` slots. */
  #resize(capacity: number): void {
    const keys = arraySlots<string | undefined>(capacity);
    const stamps = this.newStamps(capacity);
    for (let index = 0; index < this.#length; index++) {
      const from = (this.#head + index) & this.#mask;
      keys[index] = this.#keys[from];
      stamps[index] = this.#stamps[from]!;
    }
    this.#keys = keys;
    this.#stamps = stamps;
    this.#mask = capacity - 1;
    this.#head = 0;
  }

  /** An empty ring that grew gives its memory back, as the store it serves may stay small for long. */
  #emptied(): void {
    this.#head = 0;
    if (this.#mask + 1 > MIN_CAPACITY) this.#resize(MIN_CAPACITY);
  }
}
