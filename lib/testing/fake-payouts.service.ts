import type { CreatePayoutRequest } from '../payouts/create-payout-request.interface.js';
import { validatePayoutRequest } from '../payouts/payout-request-validator.js';
import type { PayoutResult } from '../payouts/payout-result.interface.js';
import type { PayoutsService } from '../payouts/payouts.service.js';

type ScriptedOutcome = { result: PayoutResult } | { error: unknown };

const DEFAULT_RESULT: PayoutResult = { status: 200, headers: { 'content-type': 'application/json' }, body: {} };

/**
 * Stands in for `PayoutsService` in a Nest testing module:
 * `.overrideProvider(PayoutsService).useValue(new FakePayoutsService())`.
 *
 * Nothing is sent. Each request is checked by the same rules as the real service (an invalid one
 * rejects with `PayoutValidationError`), recorded, then answered with the next queued outcome,
 * or with `{ status: 200, headers: {...}, body: {} }` when none is queued.
 */
export class FakePayoutsService implements Pick<PayoutsService, 'createPayout'> {
  /** A copy of every request given to `createPayout`, in order, invalid ones included. */
  readonly requests: CreatePayoutRequest[] = [];
  readonly #queue: ScriptedOutcome[] = [];

  /** Answers the next unanswered call with this result; `status`, `headers` and `body` default as above. */
  resolveNext(result: Partial<PayoutResult> = {}): this {
    this.#queue.push({ result: { ...DEFAULT_RESULT, ...result } });
    return this;
  }

  /** Rejects the next unanswered call with `error`, for example `new PayoutsApiError(422, body, requestId)`. */
  rejectNext(error: unknown): this {
    this.#queue.push({ error });
    return this;
  }

  async createPayout(request: CreatePayoutRequest): Promise<PayoutResult> {
    this.requests.push(structuredClone(request));
    await validatePayoutRequest(request);
    const outcome = this.#queue.shift() ?? { result: DEFAULT_RESULT };
    if ('error' in outcome) {
      throw outcome.error;
    }
    return structuredClone(outcome.result);
  }
}
