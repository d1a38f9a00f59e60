import { Injectable, Logger } from '@nestjs/common';
import type { CreatePayoutRequest, PayoutLedgerTransaction } from 'nestjs-payouts';
import {
  InjectPayoutRuns,
  OnPayoutOutcomeUnknown,
  OnPayoutRefused,
  OnPayoutRunCompleted,
  OnPayoutSent,
  type PayoutEnqueueResult,
  type PayoutRunResult,
  PayoutRunsService,
  type PayoutRunSummary,
} from 'nestjs-payouts/payout-runs';

/** The sample's month-end run: every seller's earnings, queued at once and sent by the worker within the limit. */
@Injectable()
export class SellerPayoutRun {
  private readonly logger = new Logger(SellerPayoutRun.name);
  /** The request_ids paid, as the sent handler saw them. */
  readonly paid = new Set<string>();
  summary: PayoutRunSummary | undefined;

  constructor(@InjectPayoutRuns() private readonly runs: PayoutRunsService) {}

  payAll(runId: string, sellers: number): Promise<PayoutEnqueueResult> {
    return this.runs.enqueue(this.payouts(runId, sellers), { runId });
  }

  /**
   * With the PostgreSQL ledger: the payouts written in the transaction `db` of the caller (a `pg` client after
   * `BEGIN`), as pending; queued once that transaction commits, never if it rolls back.
   */
  payInTransaction(
    runId: string,
    payouts: CreatePayoutRequest[],
    db: PayoutLedgerTransaction,
  ): Promise<PayoutEnqueueResult> {
    return this.runs.enqueue(payouts, { runId, db });
  }

  /** Every seller's earnings for the run, one request_id per seller and month. */
  payouts(runId: string, sellers: number): CreatePayoutRequest[] {
    return Array.from({ length: sellers }, (_, index) => ({
      payout_method: {
        type: 'wallet',
        payment_method: 'mpesa',
        beneficiary: {
          name: `Seller ${index + 1}`,
          payout_method_details: { phone_number: `2547000${String(index).padStart(5, '0')}` },
        },
      },
      amount: { value: `${100 + index}.00`, currency_code: 'KES' },
      country_code: 'KE',
      purpose: 'seller_earnings',
      reference: `${runId}-seller-${index + 1}`,
      // One request_id per seller and month: enqueueing the run again never pays a seller twice.
      request_id: `${runId}-seller-${index + 1}`,
    }));
  }

  @OnPayoutSent()
  sent(result: PayoutRunResult): void {
    this.paid.add(result.requestId);
  }

  @OnPayoutRefused()
  refused(result: PayoutRunResult): void {
    this.logger.warn(`refused: ${result.requestId}: ${result.error?.message}`);
  }

  @OnPayoutOutcomeUnknown()
  unknown(result: PayoutRunResult): void {
    this.logger.warn(`outcome unknown, check with the provider: ${result.requestId}`);
  }

  @OnPayoutRunCompleted()
  completed(summary: PayoutRunSummary): void {
    this.summary = summary;
    const { sent, refused, unknown } = summary.counts;
    this.logger.log(`run ${summary.runId} completed: ${sent} sent, ${refused} refused, ${unknown} unknown`);
  }
}
