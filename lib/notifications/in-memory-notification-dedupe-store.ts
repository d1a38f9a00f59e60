import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import type { NotificationClaim, NotificationDedupeStore } from './notification-dedupe-store.interface.js';

export interface InMemoryNotificationDedupeStoreOptions {
  /** How long a handled notification is remembered. Default 24 hours. */
  ttlMs?: number;
  /** Most entries kept; the oldest are evicted first. Default `100000`. */
  maxEntries?: number;
  /** Clock in milliseconds, replaceable in tests. Default `Date.now`. */
  now?: () => number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Marks a key whose handlers are running; handled keys hold their expiry time instead. */
const IN_PROGRESS = -1;

/**
 * The default store: bounded in time and size, private to one process.
 * Entries sit in a `Map` in insertion order, which is also expiry order, so pruning stops at the first live entry.
 */
export class InMemoryNotificationDedupeStore implements NotificationDedupeStore {
  readonly #entries = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: InMemoryNotificationDedupeStoreOptions = {}) {
    this.#ttlMs = positiveInteger('notifications.dedupe.ttlMs', options.ttlMs, DAY_MS);
    this.#maxEntries = positiveInteger('notifications.dedupe.maxEntries', options.maxEntries, 100_000);
    this.#now = options.now ?? Date.now;
  }

  /** Number of remembered keys, expired ones not yet pruned included. */
  get size(): number {
    return this.#entries.size;
  }

  claim(key: string): NotificationClaim {
    const state = this.#entries.get(key);
    if (state === IN_PROGRESS) return 'in-progress';
    if (state !== undefined) {
      if (state > this.#now()) return 'handled';
      this.#entries.delete(key);
    }
    this.#insert(key, IN_PROGRESS);
    return 'claimed';
  }

  complete(key: string): void {
    this.#entries.delete(key);
    this.#insert(key, this.#now() + this.#ttlMs);
  }

  release(key: string): void {
    if (this.#entries.get(key) === IN_PROGRESS) {
      this.#entries.delete(key);
    }
  }

  #insert(key: string, state: number): void {
    this.#prune();
    if (this.#entries.size >= this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
    this.#entries.set(key, state);
  }

  /** Drops expired entries from the oldest end; keys still in progress are skipped, not dropped. */
  #prune(): void {
    const now = this.#now();
    for (const [key, state] of this.#entries) {
      if (state === IN_PROGRESS) continue;
      if (state > now) return;
      this.#entries.delete(key);
    }
  }
}

function positiveInteger(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new PayoutsConfigError(option, 'a positive whole number');
  }
  return value;
}
