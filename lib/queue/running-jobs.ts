/**
 * The jobs whose handlers are running on this instance, so that shutdown knows whether it is waiting for handlers
 * or only for Redis.
 */
export class RunningJobs {
  #count = 0;
  #waiting: (() => void)[] = [];

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
