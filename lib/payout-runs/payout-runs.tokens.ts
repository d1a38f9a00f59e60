import { Inject, type Type } from '@nestjs/common';
import { DEFAULT_PAYOUTS_ACCOUNT } from '../index.js';
import { PayoutRunsService } from './payout-runs.service.js';

/**
 * The injection token of the `PayoutRunsService` of an account, for `app.get()`, `moduleRef.get()` or
 * `overrideProvider()`. Without a name (or with `'default'`) it is the `PayoutRunsService` class, as for
 * `PayoutsService`, so `app.get(PayoutRunsService)` finds the unnamed account's runs.
 */
export function getPayoutRunsToken(account: string = DEFAULT_PAYOUTS_ACCOUNT): Type<PayoutRunsService> | string {
  return account === DEFAULT_PAYOUTS_ACCOUNT ? PayoutRunsService : `PayoutRunsService:${account}`;
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
