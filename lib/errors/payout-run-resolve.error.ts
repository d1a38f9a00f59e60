import { printable } from '../common/printable.js';
import { PayoutsError } from './payouts.error.js';

/**
 * Whether a decision of `resolveUnknown()` that did not finish is recorded on the payout:
 * - `no`: nothing changed (Redis or the ledger failed before the decision was written);
 * - `maybe`: no reply came to the write of the decision;
 * - `yes`: recorded, but queueing the payout's job again failed: unless the job was queued all the same (no reply
 *   came in time), the payout is neither sent again (`absent`) nor handled (`sent`) until it is, and it is no longer
 *   listed as unknown.
 */
export type PayoutRunDecisionRecorded = 'no' | 'maybe' | 'yes';

/**
 * `resolveUnknown()` could not finish: Redis gave no reply within `enqueueTimeoutMs`, or Redis or the ledger failed
 * once the decision may be recorded (a failure before leaves Redis's or the ledger's own error, nothing changed).
 * `recorded` says how far the decision got. Calling `resolveUnknown()` again with the same decision is safe,
 * and is what to do: it records the decision if it is not, and queues the job of a decision recorded without it; it
 * never sends a payout twice. Another decision after a recorded one is refused as `'not-unknown'`.
 */
export class PayoutRunResolveError extends PayoutsError {
  /** Calling `resolveUnknown()` again with the same decision is always safe: nothing is sent twice. */
  readonly retrySafe = true;

  constructor(
    readonly requestId: string,
    readonly decision: 'sent' | 'absent',
    readonly recorded: PayoutRunDecisionRecorded,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The decision ${decision} on payout ${printable(requestId)} ${RECORDED[recorded]} (${detail}). Calling ` +
        'resolveUnknown() again with the same decision is safe: it finishes what is left, and sends nothing twice.',
      options,
    );
  }
}

const RECORDED: Record<PayoutRunDecisionRecorded, string> = {
  no: 'was not recorded',
  maybe: 'may or may not be recorded',
  yes: 'is recorded, but queueing its job again failed',
};
