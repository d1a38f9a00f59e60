/** Reflect-metadata key under which a result handler lists what it receives, one binding per decorator. */
export const PAYOUT_RUN_HANDLER_METADATA = Symbol('payouts:payout-run-handler');

/** What a handler receives: an outcome of a payout, or the end of a run. */
export type PayoutRunEvent = 'sent' | 'refused' | 'unknown' | 'run-completed';

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

/** Runs the method with a `PayoutRunSummary` once per run, when it first has nothing queued, sending or retrying. */
export function OnPayoutRunCompleted(options?: PayoutRunHandlerOptions): MethodDecorator {
  return onPayoutRun('run-completed', options);
}
