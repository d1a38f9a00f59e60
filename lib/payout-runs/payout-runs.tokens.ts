import { Inject } from '@nestjs/common';
import { DEFAULT_PAYOUTS_ACCOUNT } from '../index.js';

/** The injection token of the `PayoutRunsService` of an account (the unnamed registration's without a name). */
export function getPayoutRunsToken(account: string = DEFAULT_PAYOUTS_ACCOUNT): string {
  return `PayoutRunsService:${account}`;
}

/** The injection token of the BullMQ `Queue` of an account's payout runs: for Bull Board or metrics. */
export function getPayoutRunsQueueToken(account: string = DEFAULT_PAYOUTS_ACCOUNT): string {
  return `PayoutRunsQueue:${account}`;
}

/**
 * The injection token of the ledger of an account's payout runs (`PayoutLedger`): the `ledger` option's, else the
 * Redis store beside the queue.
 */
export function getPayoutLedgerToken(account: string = DEFAULT_PAYOUTS_ACCOUNT): string {
  return `PayoutLedger:${account}`;
}

/** Injects the `PayoutRunsService` of an account: `constructor(@InjectPayoutRuns() private readonly runs: …) {}`. */
export function InjectPayoutRuns(account?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getPayoutRunsToken(account));
}
