import { untilAborted } from '../common/until-aborted.js';

/**
 * The hard deadline of one attempt: from the access token through connecting, sending and the reply's last byte.
 * `signal` aborts when it passes or when the caller's own signal aborts; whatever is still running then gives up
 * (`race`) or is torn down by the signal.
 */
export class AttemptDeadline {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;
  #timedOut = false;
  readonly #abortByCaller = () => this.#controller.abort();

  constructor(
    readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort();
    }, timeoutMs);
    if (callerSignal?.aborted) this.#controller.abort();
    callerSignal?.addEventListener('abort', this.#abortByCaller, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The deadline passed (rather than the caller aborting). */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** The caller's signal aborted the attempt before the deadline passed. */
  get abortedByCaller(): boolean {
    return this.#controller.signal.aborted && !this.#timedOut;
  }

  /** Settles as `promise` does, or rejects with `onAbort()` if the deadline passes or the caller aborts first. */
  race<T>(promise: Promise<T>, onAbort: () => Error): Promise<T> {
    return untilAborted(promise, this.signal, () => {
      throw onAbort();
    });
  }

  /** Stops the timer and lets go of the caller's signal once the attempt is over, so neither keeps anything alive. */
  clear(): void {
    clearTimeout(this.#timer);
    this.callerSignal?.removeEventListener('abort', this.#abortByCaller);
  }
}
