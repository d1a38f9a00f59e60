/**
 * `pending`, or `aborted` once `signal` aborts, whichever comes first. Its listener leaves `signal` as soon as `pending`
 * settles: a call made again and again while a wait lasts (a retry every second while a ledger is away) leaves nothing
 * behind on a signal that may never abort, where a `Promise.race` with a promise still pending keeps about 300 bytes
 * per call until that promise settles. A `pending` left behind that rejects later is handled here.
 */
export function untilAborted<T, A>(pending: Promise<T>, signal: AbortSignal, aborted: A): Promise<T | A> {
  return new Promise<T | A>((resolve, reject) => {
    const onAbort = () => resolve(aborted);
    pending.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
