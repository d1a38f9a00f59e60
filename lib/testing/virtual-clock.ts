import type { DeliveryClock } from '../simulator/delivery-clock.js';

/**
 * A delivery clock whose `sleep` returns at once and moves its time forward, so the spec's
 * 15-minute re-send schedule runs in milliseconds and attempt times are exact.
 */
export class VirtualClock implements DeliveryClock {
  /** Every wait asked for, in order. */
  readonly sleeps: number[] = [];
  #now: number;

  constructor(start: Date = new Date('2030-01-01T00:00:00.000Z')) {
    this.#now = start.getTime();
  }

  now(): Date {
    return new Date(this.#now);
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.#now += ms;
  }
}
