import type { CreatePayoutRequest, PayoutsService } from 'nestjs-payouts';
import type { PayoutRunResult, PayoutRunsService } from 'nestjs-payouts/payout-runs';

let sequence = 0;

/** The payout every bench worker sends: the same body each time, with a `request_id` of its own. */
export function benchPayoutRequest(): CreatePayoutRequest {
  return {
    payout_method: {
      type: 'wallet',
      payment_method: 'mobile_money',
      beneficiary: { name: 'Amina Njoroge', payout_method_details: { phone_number: '254712345678' } },
    },
    amount: { value: '125.50', currency_code: 'KES' },
    country_code: 'KE',
    purpose: 'salary_payment',
    reference: 'March salary',
    request_id: `bench_${process.pid}_${++sequence}`,
  };
}

/**
 * Resolves a run's completion as its sent handlers see each payout. The workers' `@OnPayoutSent()` handlers hand each
 * result to `count`; a result of another run is ignored.
 */
export class RunCompletion {
  #waiting: { runId: string; left: number; done: () => void } | undefined;

  expect(runId: string, payouts: number): Promise<void> {
    return new Promise((done) => (this.#waiting = { runId, left: payouts, done }));
  }

  count(result: PayoutRunResult): void {
    const waiting = this.#waiting;
    if (waiting?.runId !== result.runId) return;
    waiting.left -= 1;
    if (waiting.left === 0) waiting.done();
  }
}

/** The hand-written alternative: `concurrency` callers, each sending its next payout once the last one is answered. */
export function createPayoutLoop(payouts: PayoutsService, concurrency: number): (total: number) => Promise<void> {
  return async (total) => {
    let left = total;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left > 0) {
          left -= 1;
          const { status } = await payouts.createPayout(benchPayoutRequest());
          if (status !== 201) throw new Error(`expected 201 from the stub, got ${status}`);
        }
      }),
    );
  };
}

/** A run of `total` payouts through `runs`, from the `enqueue()` call to the last sent handler. */
export function payoutRun(runs: PayoutRunsService, completion: RunCompletion): (total: number) => Promise<void> {
  let runCount = 0;
  return async (total) => {
    const runId = `bench-${process.pid}-${runs.account}-${++runCount}`;
    const done = completion.expect(runId, total);
    const enqueued = await runs.enqueue(
      Array.from({ length: total }, () => benchPayoutRequest()),
      { runId },
    );
    if (enqueued.queued !== total) throw new Error(`queued ${enqueued.queued} of ${total}`);
    await done;
  };
}
