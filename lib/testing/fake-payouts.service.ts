import type { CreatePayoutRequest } from '../payouts/create-payout-request.interface.js';
import { validatePayoutRequest } from '../payouts/payout-request-validator.js';
import type { PayoutResult } from '../payouts/payout-result.interface.js';
import type { PayoutsApiRequest } from '../payouts/payouts-api-request.interface.js';
import type { PayoutsApiResponse } from '../payouts/payouts-api-response.interface.js';
import type { PayoutsCallOptions } from '../payouts/payouts-call-options.interface.js';
import type { PayoutsService } from '../payouts/payouts.service.js';

type ScriptedOutcome = { result: PayoutResult } | { error: unknown };

const DEFAULT_RESULT: PayoutResult = { status: 200, headers: { 'content-type': 'application/json' }, body: {} };

/**
 * Stands in for `PayoutsService` in a Nest testing module:
 * `.overrideProvider(PayoutsService).useValue(new FakePayoutsService())`.
 *
 * Nothing is sent. Each payout request is checked by the same rules as the real service (an invalid one
 * rejects with `PayoutValidationError`), recorded, then answered with the next queued outcome,
 * or with `{ status: 200, headers: {...}, body: {} }` when none is queued. `request()` calls are recorded
 * and answered from the same queue.
 */
export class FakePayoutsService implements Pick<PayoutsService, 'createPayout' | 'request'> {
  /** A copy of every request given to `createPayout`, in order, invalid ones included. */
  readonly requests: CreatePayoutRequest[] = [];
  /** A copy of every request given to `request()`, in order (its `signal` left out). */
  readonly apiRequests: Omit<PayoutsApiRequest, 'signal'>[] = [];
  readonly #queue: ScriptedOutcome[] = [];

  /** Answers the next unanswered call with this result; `status`, `headers` and `body` default as above. */
  resolveNext(result: Partial<PayoutResult<object>> = {}): this {
    this.#queue.push({ result: { ...DEFAULT_RESULT, ...result } as PayoutResult });
    return this;
  }

  /** Rejects the next unanswered call with `error`, for example `new PayoutsApiError(422, body, requestId)`. */
  rejectNext(error: unknown): this {
    this.#queue.push({ error });
    return this;
  }

  async createPayout<TBody extends object = Record<string, unknown>>(
    request: CreatePayoutRequest,
    // Accepted for the real service's signature; the fake sends nothing, so there is nothing to time out or abort.
    _options?: PayoutsCallOptions,
  ): Promise<PayoutResult<TBody>> {
    this.requests.push(structuredClone(request));
    await validatePayoutRequest(request);
    return this.answer() as PayoutResult<TBody>;
  }

  async request<TBody = unknown>(request: PayoutsApiRequest): Promise<PayoutsApiResponse<TBody>> {
    const { signal: _signal, ...recorded } = request;
    this.apiRequests.push(structuredClone(recorded));
    return this.answer() as PayoutsApiResponse<TBody>;
  }

  private answer(): PayoutResult {
    const outcome = this.#queue.shift() ?? { result: DEFAULT_RESULT };
    if ('error' in outcome) {
      throw outcome.error;
    }
    return structuredClone(outcome.result);
  }
}
