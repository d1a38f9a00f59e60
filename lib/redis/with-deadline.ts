/**
 * Settles as `pending` does, or rejects with `timeoutError()` after `ms`, whichever comes first: the store's own
 * timer, rather than the client's retry and offline-queue settings, bounds how long a request waits for Redis.
 */
export function withDeadline<T>(pending: Promise<T>, ms: number, timeoutError: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timeoutError()), ms);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
