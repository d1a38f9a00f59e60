/** Fewest records worth compacting; below it the copy costs more than the slots it frees. */
const MIN_COMPACT_LENGTH = 64;

/**
 * Keys in arrival order, each with the stamp it was recorded with, for `InMemoryNotificationDedupeStore`.
 * A record is current while `isCurrent(key, stamp)` holds; the owner makes a record stale simply by changing or
 * deleting the key's entry, and stale records are skipped at the front or dropped when the arrays are compacted.
 * Arrays with a head index, unlike deleting from the front of a `Map`, leave no holes to walk over later:
 * push, skip and shift are O(1), and compaction, at most once per doubling, is O(1) amortised.
 */
export class StampedKeyQueue<Stamp extends number | string = number> {
  // A slot before the head is emptied, so that a forgotten key's string does not stay reachable until compaction.
  #keys: (string | undefined)[] = [];
  #stamps: Stamp[] = [];
  #head = 0;
  #compactAt = MIN_COMPACT_LENGTH;

  constructor(private readonly isCurrent: (key: string, stamp: Stamp) => boolean) {}

  push(key: string, stamp: Stamp): void {
    if (this.#keys.length >= this.#compactAt) this.#compact();
    this.#keys.push(key);
    this.#stamps.push(stamp);
  }

  /** Drops stale records from the front; `false` when no current record is left. */
  skipStale(): boolean {
    const keys = this.#keys;
    const stamps = this.#stamps;
    while (this.#head < keys.length) {
      if (this.isCurrent(keys[this.#head]!, stamps[this.#head]!)) return true;
      keys[this.#head++] = undefined;
    }
    this.#clear();
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
    return this.#head < this.#stamps.length && this.#stamps[this.#head]! <= bound;
  }

  shift(): void {
    this.#keys[this.#head++] = undefined;
    if (this.#head === this.#keys.length) this.#clear();
  }

  /** Keeps the current records only, so the arrays hold at most about twice the current ones. */
  #compact(): void {
    const keys: string[] = [];
    const stamps: Stamp[] = [];
    for (let index = this.#head; index < this.#keys.length; index++) {
      const key = this.#keys[index]!;
      const stamp = this.#stamps[index]!;
      if (this.isCurrent(key, stamp)) {
        keys.push(key);
        stamps.push(stamp);
      }
    }
    this.#keys = keys;
    this.#stamps = stamps;
    this.#head = 0;
    this.#compactAt = Math.max(MIN_COMPACT_LENGTH, 2 * keys.length);
  }

  #clear(): void {
    this.#keys = [];
    this.#stamps = [];
    this.#head = 0;
    this.#compactAt = MIN_COMPACT_LENGTH;
  }
}
