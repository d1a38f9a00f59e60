import type { PayoutRunProgress } from '../payout-runs.service.js';
import { completedLine, endedCount, plainLine, type ProgressFrame, terminalLine } from './progress-line.js';

/** Where `progress --watch` draws, and how it learns of Ctrl-C. */
export interface WatchTerminal {
  /** A terminal: the bar is redrawn in place. Otherwise (a pipe, a file, a CI log) a line per change. */
  readonly isTTY: boolean;
  /** The terminal's width, read at each redraw (it may be resized). */
  readonly columns: number;
  /** Aborted on Ctrl-C. */
  readonly interrupted: AbortSignal;
  /**
   * Moves the cursor back to the start of the line drawn last, and clears it, so that the next line takes its place.
   * The one control sequence the watch writes: the output escapes every control character of the lines themselves.
   */
  clearLastLine(): void;
}

/** Where the watch writes: one line per call. */
export interface WatchOutput {
  out(line: string): void;
  err(line: string): void;
}

/** How a watch ended: the run completed, it was stopped (Ctrl-C), or there is no such run. */
export type WatchEnd = 'completed' | 'interrupted' | 'not-found';

/** The rate is measured over the readings of this last span. */
const RATE_WINDOW_MS = 10_000;

/**
 * Follows a run until it completes, reading its counts with `read` every `intervalMs`. On a terminal one line per run
 * is redrawn in place; elsewhere a line is printed each time the counts change. `read` bounds its own wait for Redis
 * and throws when it cannot reach it.
 */
export async function watchRun(
  runId: string,
  read: () => Promise<PayoutRunProgress | undefined>,
  intervalMs: number,
  output: WatchOutput,
  terminal: WatchTerminal,
): Promise<WatchEnd> {
  const rate = new RecentRate();
  let drawn = false;
  let printed: string | undefined;
  while (!terminal.interrupted.aborted) {
    const progress = await read();
    if (!progress) return 'not-found';
    const { counts, completedAt } = progress;
    const frame: ProgressFrame = { runId, counts, completedAt, perSecond: rate.add(Date.now(), endedCount(counts)) };
    if (terminal.isTTY) {
      if (drawn) terminal.clearLastLine();
      output.out(terminalLine(frame, terminal.columns));
      drawn = true;
    } else {
      // A line when the counts change, not when only the rate does: a log gets no line of a run that stands still.
      const shown = JSON.stringify(counts);
      if (shown !== printed) output.out(plainLine(frame));
      printed = shown;
    }
    if (completedAt) {
      output.out(completedLine(frame));
      return 'completed';
    }
    await pause(intervalMs, terminal.interrupted);
  }
  output.err('Stopped watching; the run goes on.');
  return 'interrupted';
}

/** Payouts ended per second over the last readings. */
class RecentRate {
  readonly #readings: { at: number; ended: number }[] = [];

  /** Adds a reading; the rate since the oldest one of the window, or undefined with a single reading. */
  add(at: number, ended: number): number | undefined {
    this.#readings.push({ at, ended });
    while (this.#readings.length > 2 && at - this.#readings[0]!.at > RATE_WINDOW_MS) this.#readings.shift();
    const first = this.#readings[0]!;
    const seconds = (at - first.at) / 1000;
    return seconds > 0 ? Math.max(0, ended - first.ended) / seconds : undefined;
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
