import { wholeNumberOption } from '../../common/whole-number-option.js';
import type {
  NotificationClaim,
  NotificationDedupeStore,
  NotificationHandlerRecord,
  NotificationRecordedClaim,
} from '../../interfaces/notification-dedupe-store.interface.js';
import { float64Slots, StampedKeyQueue, arraySlots } from './stamped-key-queue.js';

export interface InMemoryNotificationDedupeStoreOptions {
  /** How long a handled notification is remembered. Default 24 hours. */
  ttlMs?: number;
  /** Most entries kept; the oldest handled ones are evicted first. Default `100000`. */
  maxEntries?: number;
  /** Clock in milliseconds, replaceable in tests. Default `Date.now`. */
  now?: () => number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** A full store forgets 1/256 of `maxEntries` at once (390 keys at the default), one key below 256 entries. */
const EVICTION_BATCH_DIVISOR = 256;
const OWNER = 'InMemoryNotificationDedupeStore';

/**
 * The default store: bounded in time and size, private to one process. Every operation is O(1) amortised, and a
 * notification costs two lookups and two writes of its key in one `Map`.
 *
 * The map holds each key's state in one value: a handled key its expiry time (milliseconds since the epoch, so
 * positive), a claim (handlers still running) the delivery's claim id, or, for a claim made without one, the negated
 * claim number. A queue per state keeps the keys in arrival order with the value they were recorded with. The handled
 * queue is in expiry order too, as the ttl is fixed, so expired keys are found at its front. When the store is full
 * the oldest handled keys go first, 1/256 of `maxEntries` at a time: evicting a running claim would let a concurrent
 * re-send run the handlers again. Only when every key is a running claim does the oldest claim go, so the bound always
 * holds. As a claim is its claim id, only that delivery can release it: once its claim was evicted and a re-send
 * claimed the key anew, the key holds the re-send's id. Keeping the id in the key's own entry costs the route no
 * second map write per notification.
 *
 * A key released with a record of its handlers is kept like a handled key (same expiry, same eviction order), its
 * record aside; a claim answers the record and keeps it until the claim completes, or is released with a new one.
 * Only notifications whose handlers partly failed have a record, so the others never look one up.
 */
export class InMemoryNotificationDedupeStore implements NotificationDedupeStore {
  /** Each key's state: its expiry when handled (a number > 0), its claim when claimed (a string or a number < 0). */
  readonly #entries = new Map<string, number | string>();
  readonly #handledOrder = new StampedKeyQueue((key, expiresAt) => this.#entries.get(key) === expiresAt, float64Slots);
  readonly #claimOrder = new StampedKeyQueue<number | string>(
    (key, claim) => this.#entries.get(key) === claim,
    arraySlots,
  );
  /** The record of each key released with one, also while a later delivery claims it. */
  readonly #records = new Map<string, NotificationHandlerRecord>();
  #lastClaim = 0;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #evictionBatch: number;
  readonly #now: () => number;

  constructor(options: InMemoryNotificationDedupeStoreOptions = {}) {
    this.#ttlMs = wholeNumberOption('ttlMs', options.ttlMs, DAY_MS, 1, 'milliseconds', OWNER);
    this.#maxEntries = wholeNumberOption('maxEntries', options.maxEntries, 100_000, 1, undefined, OWNER);
    this.#evictionBatch = Math.ceil(this.#maxEntries / EVICTION_BATCH_DIVISOR);
    this.#now = options.now ?? Date.now;
  }

  /** Number of remembered keys, expired ones not yet pruned included. */
  get size(): number {
    return this.#entries.size;
  }

  claim(key: string, claimId?: string): NotificationClaim {
    const claim = this.claimWithRecord(key, claimId);
    return typeof claim === 'string' ? claim : claim.claim;
  }

  claimWithRecord(key: string, claimId?: string): NotificationRecordedClaim {
    const entries = this.#entries;
    const records = this.#records;
    const state = entries.get(key);
    const now = this.#now();
    let record: NotificationHandlerRecord | undefined;
    if (state !== undefined) {
      // A running claim: a delivery's claim id, or the negated number of a claim made without one.
      if (typeof state === 'string' || state < 0) return 'in-progress';
      record = records.size === 0 ? undefined : records.get(key);
      if (state > now) {
        if (record === undefined) return 'handled';
      } else {
        entries.delete(key);
        if (record !== undefined) records.delete(key);
        record = undefined;
      }
    }
    // Room is made before the record is kept again: the key's own released entry may be among those forgotten.
    this.#makeRoom(now);
    const claim = claimId ?? -++this.#lastClaim;
    entries.set(key, claim);
    this.#claimOrder.push(key, claim);
    if (record === undefined) return 'claimed';
    records.set(key, record);
    return { claim: 'claimed', record };
  }

  complete(key: string): void {
    const entries = this.#entries;
    const now = this.#now();
    const expiresAt = now + this.#ttlMs;
    const state = entries.get(key);
    // Dropped first: a key released with a record in this same millisecond becomes a handled key of that expiry.
    if (this.#records.size > 0) this.#records.delete(key);
    // A key completed without a live claim (its claim was evicted) is a new entry and needs room like one.
    if (state === undefined) this.#makeRoom(now);
    else if (state === expiresAt) return;
    entries.set(key, expiresAt);
    this.#handledOrder.push(key, expiresAt);
  }

  /**
   * Drops the caller's own claim only: once full, the store may have evicted it and a re-send claimed the key anew.
   * A key claimed with a record goes back to that record.
   */
  release(key: string, claimId?: string): void {
    if (!this.#ownsClaim(key, claimId)) return;
    if (this.#records.size > 0 && this.#records.has(key)) this.#keepReleased(key);
    else this.#entries.delete(key);
  }

  /** Drops the caller's own claim, keeping `record` in its place for the next delivery. */
  releaseWithRecord(key: string, claimId: string | undefined, record: NotificationHandlerRecord): void {
    if (!this.#ownsClaim(key, claimId)) return;
    this.#records.set(key, record);
    this.#keepReleased(key);
  }

  /** Whether `key` holds the claim made with `claimId`, or, without one, a claim made without one. */
  #ownsClaim(key: string, claimId: string | undefined): boolean {
    const state = this.#entries.get(key);
    return claimId === undefined ? typeof state === 'number' && state < 0 : state === claimId;
  }

  /** A released key with a record expires, and is evicted, as a handled one; it takes the room its claim took. */
  #keepReleased(key: string): void {
    const expiresAt = this.#now() + this.#ttlMs;
    this.#entries.set(key, expiresAt);
    this.#handledOrder.push(key, expiresAt);
  }

  /** Forgets a key that expired or was evicted, with its record if it has one. */
  #forget(key: string): void {
    this.#entries.delete(key);
    if (this.#records.size > 0) this.#records.delete(key);
  }

  /** Forgets expired keys, then, when still full, the oldest handled key, or the oldest claim if none is handled. */
  #makeRoom(now: number): void {
    const entries = this.#entries;
    const handledOrder = this.#handledOrder;
    // The usual case, room and nothing expired, costs no lookup.
    if (entries.size < this.#maxEntries && !handledOrder.frontStampAtMost(now)) return;
    let anyHandled = handledOrder.skipStale();
    while (anyHandled && handledOrder.frontStamp <= now) {
      this.#forget(handledOrder.frontKey);
      handledOrder.shift();
      anyHandled = handledOrder.skipStale();
    }
    if (entries.size < this.#maxEntries) return;
    // A batch at once: the oldest keys lie together in memory, and the notifications that follow find room without
    // any lookup, rather than each evicting one key from a cold part of the map.
    for (let batch = this.#evictionBatch; anyHandled && batch > 0; batch--) {
      this.#forget(handledOrder.frontKey);
      handledOrder.shift();
      anyHandled = handledOrder.skipStale();
    }
    if (entries.size >= this.#maxEntries && this.#claimOrder.skipStale()) {
      const evicted = this.#claimOrder.frontKey;
      this.#forget(evicted);
      this.#claimOrder.shift();
    }
  }
}
