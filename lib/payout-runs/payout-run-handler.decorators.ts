/** Reflect-metadata key under which a result handler lists what it receives, one binding per decorator. */
export const PAYOUT_RUN_HANDLER_METADATA = Symbol('payouts:payout-run-handler');

/** What a handler receives: an outcome of a payout, the end of a run, or a run's progress. */
export type PayoutRunEvent = 'sent' | 'refused' | 'unknown' | 'run-completed' | 'progress';

export interface PayoutRunHandlerOptions {
  /**
   * The accounts (registration names) whose runs the method receives: `'eu'`, or several; `'default'` is the unnamed
   * registration. Omitted: every account's.
   */
  account?: string | readonly string[];
}

export interface PayoutRunHandlerBinding {
  readonly event: PayoutRunEvent;
  readonly accounts: readonly string[] | undefined;
}

function onPayoutRun(event: PayoutRunEvent, options: PayoutRunHandlerOptions | undefined): MethodDecorator {
  const account: unknown = options?.account;
  const binding: PayoutRunHandlerBinding = {
    event,
    accounts: account === undefined ? undefined : Array.isArray(account) ? [...account] : [account as string],
  };
  return (_target, _method, descriptor) => {
    const handlerFn: object = descriptor.value as object;
    const bindings: readonly PayoutRunHandlerBinding[] =
      Reflect.getMetadata(PAYOUT_RUN_HANDLER_METADATA, handlerFn) ?? [];
    Reflect.defineMetadata(PAYOUT_RUN_HANDLER_METADATA, [...bindings, binding], handlerFn);
  };
}

/**
 * Runs the method with a `PayoutRunResult` for each payout of a run that the provider accepted (2xx), or that a
 * person resolved as sent. A method that throws is run again (the payout is not sent again).
 */
export function OnPayoutSent(options?: PayoutRunHandlerOptions): MethodDecorator {
  return onPayoutRun('sent', options);
}

/** Runs the method for each payout refused for good: a 4xx other than 429, or never sent after every attempt. */
export function OnPayoutRefused(options?: PayoutRunHandlerOptions): MethodDecorator {
  return onPayoutRun('refused', options);
}

/**
 * Runs the method for each payout whose outcome is unknown (5xx, timeout, connection lost after sending, worker died
 * while sending): it is parked, never sent again by itself, until `resolveUnknown()` decides.
 */
export function OnPayoutOutcomeUnknown(options?: PayoutRunHandlerOptions): MethodDecorator {
  return onPayoutRun('unknown', options);
}

/**
 * Runs the method with a `PayoutRunSummary` once per run, when it first has nothing queued, sending or retrying. Its
 * counts are complete; the result handlers of the run's other payouts may still be running, here or on another
 * instance.
 */
export function OnPayoutRunCompleted(options?: PayoutRunHandlerOptions): MethodDecorator {
  return onPayoutRun('run-completed', options);
}

/**
 * Runs the method with a `PayoutRunProgressReport` (a run's counts) while this instance's worker sends the run's
 * payouts: at most once per run every `progressIntervalMs` (1 s), only when the counts changed, and a last time when
 * the run completes (`completedAt` set), for an app that shows progress in its own UI. It is told, not retried: a
 * method that throws is logged, and the next report comes all the same.
 */
export function OnPayoutRunProgress(options?: PayoutRunHandlerOptions): MethodDecorator {
  return onPayoutRun('progress', options);
}
