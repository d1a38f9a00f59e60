/** A caller waiting for the answer of a check in flight, until its own deadline. */
interface Waiter<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

/**
 * Runs a check at most once at a time per subject: a caller that comes while one is in flight waits for its answer
 * rather than starting another, each caller within its own deadline. A caller whose deadline passes leaves the
 * waiters at once, so that a check that hangs (a Redis stopped mid-connection) holds one pending call and the callers
 * of the last deadline, however many came since the hang began; its answer, when it comes, goes to those still
 * waiting, and the next caller starts a new check.
 */
export class SharedCheck<Subject extends object, T> {
  readonly #inFlight = new WeakMap<Subject, Set<Waiter<T>>>();

  constructor(private readonly check: (subject: Subject) => Promise<T>) {}

  /** The answer of the check of `subject` in flight, or of a new one; rejects with `timeoutError()` after `timeoutMs`. */
  run(subject: Subject, timeoutMs: number, timeoutError: () => Error): Promise<T> {
    let waiters = this.#inFlight.get(subject);
    if (!waiters) {
      const started = new Set<Waiter<T>>();
      waiters = started;
      this.#inFlight.set(subject, started);
      const answer = (settle: (waiter: Waiter<T>) => void) => {
        this.#inFlight.delete(subject);
        for (const waiter of started) {
          clearTimeout(waiter.timer);
          settle(waiter);
        }
        started.clear();
      };
      Promise.resolve()
        .then(() => this.check(subject))
        .then(
          (value) => answer((waiter) => waiter.resolve(value)),
          (error: unknown) => answer((waiter) => waiter.reject(error)),
        );
    }
    const joined = waiters;
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        resolve,
        reject,
        timer: setTimeout(() => {
          joined.delete(waiter);
          reject(timeoutError());
        }, timeoutMs),
      };
      joined.add(waiter);
    });
  }
}
