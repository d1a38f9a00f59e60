/** Options of one `createPayout()` or `request()` call; any other name is refused with `PayoutsCallOptionsError`. */
export interface PayoutsCallOptions {
  /** Replaces the module's `timeoutMs` for each attempt of this call, in milliseconds (1 to 2147483647). */
  timeoutMs?: number;
  /**
   * Aborts the call. Before anything is under way (or while waiting to retry a request that surely was not
   * processed) the call rejects with `PayoutsAbortedError`; while a request is under way, with
   * `PayoutOutcomeUnknownError` (`code: 'ABORTED'`), since it may have been processed.
   */
  signal?: AbortSignal;
  /**
   * Extra headers for this call, on top of the module's `headers`. The credential headers and those the module
   * needs to send and read bodies (`X-API-Key`, `Authorization`, `Content-Type`, `Accept-Encoding`, …) cannot be set,
   * in any case or with `_` for `-`.
   */
  headers?: Record<string, string>;
}
