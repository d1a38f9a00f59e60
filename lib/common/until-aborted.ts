/**
 * `pending`, or what `onAbort()` returns (or throws) once `signal` aborts, whichever comes first. Its listener leaves
 * `signal` as soon as `pending` settles: a call made again and again while a wait lasts (a retry every second while a
 * ledger is away) leaves nothing behind on a signal that may never abort, where a `Promise.race` with a promise still
 * pending keeps about 300 bytes per call until that promise settles. A `pending` left behind that rejects later is
 * handled here.
 */
export function untilAborted<T, A>(pending: Promise<T>, signal: AbortSignal, onAbort: () => A): Promise<T | A> {
  return new Promise<T | A>((resolve, reject) => {
    const abort = () => {
      try {
        resolve(onAbort());
      } catch (error) {
        reject(error);
      }
    };
    pending.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
}
