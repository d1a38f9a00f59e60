import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { wholeNumberInRange } from '../common/whole-number-option.js';
import { type CreatePayoutRequest, PayoutsConfigError, type PayoutsService } from '../index.js';

/** What the provider says of a payout whose outcome is unknown. */
export type PayoutLookupAnswer = 'created' | 'absent' | 'unknown';

/** What `lookup()` gets beside the request. */
export interface PayoutLookupContext {
  readonly account: string;
  readonly runId: string;
  /** Requests sent for it so far. */
  readonly attempt: number;
  /** Since when it is parked. */
  readonly parkedSince: Date;
  /** The account's service, for `payouts.request()` against the provider's status endpoint or report. */
  readonly payouts: PayoutsService;
  /** Aborted once `lookupTimeoutMs` has passed: the answer is then not waited for. */
  readonly signal: AbortSignal;
}

/** The `reconcile` option of payout runs: settles unknown outcomes by asking the provider, in code. */
export interface PayoutReconcileOptions {
  /**
   * Asks the provider whether the payout exists: `'created'` (the sent handlers run), `'absent'` (it is sent once more
   * under the same `request_id`) or `'unknown'` (it stays parked). Throwing counts as `'unknown'`.
   */
  lookup(request: CreatePayoutRequest, context: PayoutLookupContext): PayoutLookupAnswer | Promise<PayoutLookupAnswer>;
  /**
   * How long after the payout was parked before it is looked up: long enough for the provider to have recorded a
   * request that reached it (its reports may lag). Default `60000`.
   */
  settleAfterMs?: number;
  /** How often an instance sweeps the parked payouts (one sweep at a time across instances). Default `60000`. */
  sweepEveryMs?: number;
  /** After how long a payout still parked raises an error log and counts as given up. Default one day. */
  giveUpAfterMs?: number;
  /** How long one lookup may take before it counts as `'unknown'`. Default `10000`. */
  lookupTimeoutMs?: number;
}

export interface PayoutReconcileConfig {
  readonly lookup: PayoutReconcileOptions['lookup'];
  readonly settleAfterMs: number;
  readonly sweepEveryMs: number;
  readonly giveUpAfterMs: number;
  readonly lookupTimeoutMs: number;
}

const OWNER = 'PayoutRunsModule';
const DAY_MS = 24 * 60 * 60_000;
const KEYS = optionKeys<PayoutReconcileOptions>()(
  'lookup',
  'settleAfterMs',
  'sweepEveryMs',
  'giveUpAfterMs',
  'lookupTimeoutMs',
);

/** Checks the `reconcile` option at bootstrap; `undefined` without it. */
export function resolveReconcileOptions(options: unknown): PayoutReconcileConfig | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') {
    throw new PayoutsConfigError('reconcile', 'an object with a lookup function', OWNER);
  }
  rejectUnknownKeys(options, KEYS, 'reconcile', OWNER);
  const given = options as Record<string, unknown>;
  if (typeof given.lookup !== 'function') {
    throw new PayoutsConfigError('reconcile.lookup', "a function answering 'created', 'absent' or 'unknown'", OWNER);
  }
  return {
    lookup: given.lookup as PayoutReconcileOptions['lookup'],
    settleAfterMs: whole('settleAfterMs', given.settleAfterMs, 60_000, 0, 30 * DAY_MS),
    sweepEveryMs: whole('sweepEveryMs', given.sweepEveryMs, 60_000, 100, DAY_MS),
    giveUpAfterMs: whole('giveUpAfterMs', given.giveUpAfterMs, DAY_MS, 1000, 400 * DAY_MS),
    lookupTimeoutMs: whole('lookupTimeoutMs', given.lookupTimeoutMs, 10_000, 10, 10 * 60_000),
  };
}

const whole = (name: string, value: unknown, fallback: number, min: number, max: number) =>
  wholeNumberInRange(`reconcile.${name}`, value, fallback, min, max, OWNER);
