import { wholeNumberOption } from '../../common/whole-number-option.js';
import type { NotificationClaim, NotificationDedupeStore } from '../../interfaces/notification-dedupe-store.interface.js';
import { StampedKeyQueue } from './stamped-key-queue.js';

export interface InMemoryNotificationDedupeStoreOptions {
  /** How long a handled notification is remembered. Default 24 hours. */
  ttlMs?: number;
  /** Most entries kept; the oldest handled ones are evicted first. Default `100000`. */
  maxEntries?: number;
  /** Clock in milliseconds, replaceable in tests. Default `Date.now`. */
  now?: () => number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const OWNER = 'InMemoryNotificationDedupeStore';

/** A claim whose handlers are still running: its stamp in the claim queue, and the delivery that made it. */
interface RunningClaim {
  readonly stamp: number;
  readonly claimId: string | undefined;
}

/**
 * The default store: bounded in time and size, private to one process. Every operation is O(1) amortised.
 *
 * Handled keys map to their expiry time and claims (handlers still running) to a claim number and the delivery's
 * claim id, each map with a queue in arrival order. The handled queue is in expiry order too, as the ttl is fixed,
 * so expired keys are found at its front. When the store is full the oldest handled key goes first: evicting a running claim would let a
 * concurrent re-send run the handlers again. Only when every key is a running claim does the oldest claim go, so
 * the bound always holds.
 */
export class InMemoryNotificationDedupeStore implements NotificationDedupeStore {
  readonly #handled = new Map<string, number>();
  readonly #claims = new Map<string, RunningClaim>();
  readonly #handledOrder = new StampedKeyQueue((key, expiresAt) => this.#handled.get(key) === expiresAt);
  readonly #claimOrder = new StampedKeyQueue((key, stamp) => this.#claims.get(key)?.stamp === stamp);
  #lastClaim = 0;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: InMemoryNotificationDedupeStoreOptions = {}) {
    this.#ttlMs = wholeNumberOption('ttlMs', options.ttlMs, DAY_MS, 1, 'milliseconds', OWNER);
    this.#maxEntries = wholeNumberOption('maxEntries', options.maxEntries, 100_000, 1, undefined, OWNER);
    this.#now = options.now ?? Date.now;
  }

  /** Number of remembered keys, expired ones not yet pruned included. */
  get size(): number {
    return this.#handled.size + this.#claims.size;
  }

  claim(key: string, claimId?: string): NotificationClaim {
    if (this.#claims.has(key)) return 'in-progress';
    const now = this.#now();
    const expiresAt = this.#handled.get(key);
    if (expiresAt !== undefined) {
      if (expiresAt > now) return 'handled';
      this.#handled.delete(key);
    }
    this.#makeRoom(now);
    const stamp = ++this.#lastClaim;
    this.#claims.set(key, { stamp, claimId });
    this.#claimOrder.push(key, stamp);
    return 'claimed';
  }

  complete(key: string): void {
    const now = this.#now();
    const expiresAt = now + this.#ttlMs;
    // A key completed without a live claim (its claim was evicted) is a new entry and needs room like one.
    if (!this.#claims.delete(key) && !this.#handled.has(key)) this.#makeRoom(now);
    if (this.#handled.get(key) === expiresAt) return;
    this.#handled.set(key, expiresAt);
    this.#handledOrder.push(key, expiresAt);
  }

  /** Drops the caller's own claim only: once full, the store may have evicted it and a re-send claimed the key anew. */
  release(key: string, claimId?: string): void {
    if (this.#claims.get(key)?.claimId === claimId) this.#claims.delete(key);
  }

  /** Forgets expired keys, then, when still full, the oldest handled key, or the oldest claim if none is handled. */
  #makeRoom(now: number): void {
    const handledOrder = this.#handledOrder;
    let anyHandled = handledOrder.skipStale();
    while (anyHandled && handledOrder.frontStamp <= now) {
      this.#handled.delete(handledOrder.frontKey);
      handledOrder.shift();
      anyHandled = handledOrder.skipStale();
    }
    if (this.size < this.#maxEntries) return;
    if (anyHandled) {
      this.#handled.delete(handledOrder.frontKey);
      handledOrder.shift();
    } else if (this.#claimOrder.skipStale()) {
      this.#claims.delete(this.#claimOrder.frontKey);
      this.#claimOrder.shift();
    }
  }
}
