import { printable } from '../common/printable.js';
import { PayoutsError } from './payouts.error.js';

/**
 * `resolveUnknown()` recorded the decision, but Redis failed before the payout's job was queued again: until then the
 * payout is neither sent again (`absent`) nor handled (`sent`), and it is no longer listed as unknown. Calling
 * `resolveUnknown()` again with the same decision queues the job, and is what to do; it never sends a payout twice,
 * and another decision is refused as `'not-unknown'`.
 */
export class PayoutRunResolveError extends PayoutsError {
  /** Calling `resolveUnknown()` again with the same decision is always safe: nothing is sent twice. */
  readonly retrySafe = true;

  constructor(
    readonly requestId: string,
    readonly decision: 'sent' | 'absent',
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The decision ${decision} on payout ${printable(requestId)} is recorded, but its job could not be queued ` +
        `again (${detail}). Calling resolveUnknown() again with the same decision queues it; nothing is sent twice.`,
      options,
    );
  }
}
