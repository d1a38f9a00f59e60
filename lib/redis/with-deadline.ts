/**
 * Settles as `run` does, or rejects with `timeoutError()` after `ms`, whichever comes first. The signal given to
 * `run` (only when the client can use one) is aborted at the deadline, so a command still queued is dropped.
 * The store's own timer, rather than the client's settings, bounds how long a request waits for Redis.
 */
export function withDeadline<T>(
  ms: number,
  cancellable: boolean,
  run: (signal: AbortSignal | undefined) => Promise<T>,
  timeoutError: () => Error,
): Promise<T> {
  const controller = cancellable ? new AbortController() : undefined;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      controller?.abort();
      reject(timeoutError());
    }, ms);
    let pending: Promise<T>;
    try {
      pending = run(controller?.signal);
    } catch (error) {
      clearTimeout(timer);
      throw error;
    }
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
