import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { PayoutsConfigError } from '../index.js';

/** Above which count a figure makes the check `down`; a figure without a threshold is only reported. */
export interface PayoutsHealthThresholds {
  /** Notifications stored and not yet taken by a worker. */
  notificationsBacklog?: number;
  /** Notifications in the failed (dead-letter) set. */
  notificationsFailed?: number;
  /** Payouts queued and not yet taken by a worker. */
  payoutsBacklog?: number;
  /** Payouts whose result handlers failed for good (the failed set). */
  payoutsFailed?: number;
  /** Payouts parked because their outcome is unknown. */
  payoutsParked?: number;
}

/** What `PayoutsHealthIndicator.check()` takes. */
export interface PayoutsHealthCheckOptions {
  /** The `PayoutsModule` registration to check: its `name`. Default: the unnamed one. */
  account?: string;
  /** How long each part may take to answer before it counts as down, in ms. Default `1000`. */
  timeoutMs?: number;
  thresholds?: PayoutsHealthThresholds;
}

export interface PayoutsHealthCheckConfig {
  readonly account: string | undefined;
  readonly timeoutMs: number;
  readonly thresholds: Readonly<PayoutsHealthThresholds>;
}

const KEYS = optionKeys<PayoutsHealthCheckOptions>()('account', 'timeoutMs', 'thresholds');
const THRESHOLD_KEYS = optionKeys<PayoutsHealthThresholds>()(
  'notificationsBacklog',
  'notificationsFailed',
  'payoutsBacklog',
  'payoutsFailed',
  'payoutsParked',
);
const OWNER = 'PayoutsHealthIndicator';

/** Checks a call's options, so a typo in a threshold name is refused rather than never compared. */
export function resolvePayoutsHealthOptions(options: PayoutsHealthCheckOptions = {}): PayoutsHealthCheckConfig {
  if (options === null || typeof options !== 'object') {
    throw new PayoutsConfigError('options', 'an object with account, timeoutMs and thresholds', OWNER);
  }
  rejectUnknownKeys(options, KEYS, '', OWNER);
  const { account, timeoutMs = 1000, thresholds = {} } = options;
  if (account !== undefined && typeof account !== 'string') {
    throw new PayoutsConfigError('account', 'the name of a PayoutsModule registration', OWNER);
  }
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    throw new PayoutsConfigError('timeoutMs', 'a whole number of ms from 1 to 60000', OWNER);
  }
  if (thresholds === null || typeof thresholds !== 'object') {
    throw new PayoutsConfigError('thresholds', 'an object of counts', OWNER);
  }
  rejectUnknownKeys(thresholds, THRESHOLD_KEYS, 'thresholds', OWNER);
  for (const [name, value] of Object.entries(thresholds)) {
    if (value !== undefined && (!Number.isSafeInteger(value) || (value as number) < 0)) {
      throw new PayoutsConfigError(`thresholds.${name}`, 'a whole number from 0', OWNER);
    }
  }
  return { account, timeoutMs, thresholds };
}
