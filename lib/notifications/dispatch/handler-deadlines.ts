import { performance } from 'node:perf_hooks';

/** A notification whose handlers run under the time limit, as `HandlerDeadlines` keeps it. */
export interface HandlerDeadline {
  /** When the limit passes, on `performance.now()`'s clock; set by `HandlerDeadlines.start`. */
  deadline: number;
  /** Whether the handlers settled, or the limit passed: either way the limit no longer applies. */
  finished: boolean;
  /** The notification started after this one, while this one is kept. */
  next: HandlerDeadline | undefined;
}

/**
 * The time limits of every notification whose handlers are running, kept by one timer for all of them instead of a
 * timer each: arming and clearing a timer per notification cost more than the rest of the bookkeeping.
 *
 * All limits have the same length, so they pass in the order the notifications started: a list in that order, whose
 * front is the next to pass, and one timer set for it. A notification that settles is only marked; finished ones
 * leave the front of the list as soon as they reach it, so the list holds no more than the notifications in flight
 * and those that started after the oldest one still running. The timer keeps the process alive only while the list
 * holds a notification, as the timer per notification did; it is not cleared when the list empties (the next
 * notification would set it again at once), only released.
 */
export class HandlerDeadlines<Entry extends HandlerDeadline> {
  #first: Entry | undefined;
  #last: Entry | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #fire = () => this.#expire();

  /** `expired(entry)` is called once for each notification whose handlers are still running at its deadline. */
  constructor(
    private readonly timeoutMs: number,
    private readonly expired: (entry: Entry) => void,
  ) {}

  /** Starts the time limit of `entry`. */
  start(entry: Entry): void {
    entry.deadline = performance.now() + this.timeoutMs;
    if (this.#last === undefined) {
      this.#first = entry;
      if (this.#timer === undefined) this.#timer = setTimeout(this.#fire, this.timeoutMs);
      else this.#timer.ref();
    } else {
      this.#last.next = entry;
    }
    this.#last = entry;
  }

  /** The handlers of `entry` settled: `false` when its limit had passed already (`expired` was called for it). */
  finish(entry: Entry): boolean {
    if (entry.finished) return false;
    entry.finished = true;
    if (entry === this.#first) this.#dropFinished();
    return true;
  }

  /** The milliseconds since `entry` started. */
  elapsedMs(entry: Entry): number {
    return Math.round(performance.now() - (entry.deadline - this.timeoutMs));
  }

  #dropFinished(): void {
    let first = this.#first;
    while (first !== undefined && first.finished) {
      const next = first.next as Entry | undefined;
      first.next = undefined;
      first = next;
    }
    this.#first = first;
    if (first === undefined) {
      this.#last = undefined;
      this.#timer?.unref();
    }
  }

  #expire(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (let first = this.#first; first !== undefined && first.deadline <= now; first = this.#first) {
      if (!first.finished) {
        first.finished = true;
        this.expired(first);
      }
      this.#dropFinished();
    }
    const first = this.#first;
    // A notification whose limit is still ahead: the timer is set again for it.
    if (first !== undefined) this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(first.deadline - now)));
  }
}
