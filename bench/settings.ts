/** How long and how often each measurement runs. */
export interface BenchSettings {
  /** Length of the one unrecorded run of each scenario before the rounds. */
  readonly warmupSeconds: number;
  readonly durationSeconds: number;
  /** Rounds of interleaved runs (A, B, C, A, B, C ...); figures are medians over them. */
  readonly rounds: number;
  /** Distinct notifications after which the dedupe store's memory is sampled. */
  readonly dedupeCheckpoints: readonly number[];
  /** Requests each server under callgrind answers before its windows are counted (item 13). */
  readonly instructionWarmupRequests: number;
  /** Requests of each counted window (item 13); there are `rounds` windows. */
  readonly instructionWindowRequests: number;
  /**
   * Keys the dedupe store of item 13's store-full scenario keeps at most, and fills before its warm-up: the default
   * store's `maxEntries` in a full run, so that it is measured as a server that has run for a while.
   */
  readonly instructionStoreEntries: number;
  /** The whole run is stopped, with every child process, after this long. */
  readonly timeLimitSeconds: number;
}

/** About 20 minutes. */
export const FULL_SETTINGS: BenchSettings = {
  warmupSeconds: 3,
  durationSeconds: 8,
  rounds: 5,
  dedupeCheckpoints: [100_000, 1_000_000],
  instructionWarmupRequests: 20_000,
  instructionWindowRequests: 4_000,
  instructionStoreEntries: 100_000,
  timeLimitSeconds: 7_200,
};

/** About a minute: the same tables from shorter runs. */
export const QUICK_SETTINGS: BenchSettings = {
  warmupSeconds: 1,
  durationSeconds: 1,
  rounds: 2,
  dedupeCheckpoints: [100_000, 200_000],
  instructionWarmupRequests: 1_000,
  instructionWindowRequests: 200,
  instructionStoreEntries: 1_000,
  timeLimitSeconds: 900,
};

export const ADAPTERS = ['express', 'fastify'] as const;
export type AdapterName = (typeof ADAPTERS)[number];
