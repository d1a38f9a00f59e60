/**
 * The jobs a BullMQ worker of this instance is running (a notification's handlers, a payout being sent), so that
 * shutdown knows whether it is waiting for them or only for Redis.
 */
export class RunningJobs {
  #count = 0;
  #waiting: (() => void)[] = [];

  /** Jobs running now. */
  get count(): number {
    return this.#count;
  }

  /** Runs `job`, counted until it settles. */
  async track<T>(job: () => Promise<T>): Promise<T> {
    this.#count += 1;
    try {
      return await job();
    } finally {
      this.#count -= 1;
      if (this.#count === 0) for (const resolve of this.#waiting.splice(0)) resolve();
    }
  }

  /** Resolves once no job is running: at once when none is. */
  idle(): Promise<void> {
    return this.#count === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiting.push(resolve));
  }
}
