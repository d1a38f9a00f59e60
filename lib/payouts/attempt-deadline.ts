/**
 * The hard deadline of one attempt: from the access token through connecting, sending and the reply's last byte.
 * `signal` aborts when it passes; whatever is still running then gives up (`race`) or is torn down by the signal.
 */
export class AttemptDeadline {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;

  constructor(readonly timeoutMs: number) {
    this.#timer = setTimeout(() => this.#controller.abort(), timeoutMs);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get expired(): boolean {
    return this.#controller.signal.aborted;
  }

  /** Settles as `promise` does, or rejects with `onExpiry()` if the deadline passes first. */
  race<T>(promise: Promise<T>, onExpiry: () => Error): Promise<T> {
    if (this.expired) return Promise.reject(onExpiry());
    const { signal } = this;
    return new Promise<T>((resolve, reject) => {
      const expire = () => reject(onExpiry());
      signal.addEventListener('abort', expire, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener('abort', expire);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', expire);
          reject(error);
        },
      );
    });
  }

  /** Stops the timer once the attempt is over, so it keeps nothing alive. */
  clear(): void {
    clearTimeout(this.#timer);
  }
}
