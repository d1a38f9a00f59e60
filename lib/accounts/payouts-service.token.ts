import type { Type } from '@nestjs/common';
import { DEFAULT_PAYOUTS_ACCOUNT } from '../payouts.constants.js';
import { PayoutsService } from '../payouts/payouts.service.js';

/**
 * The injection token of the `PayoutsService` of the registration named `account`, for `moduleRef.get()`,
 * `overrideProvider()` or `inject: [...]`. Without a name (or with `'default'`) it is the `PayoutsService` class, the
 * unnamed registration's token.
 */
export function getPayoutsServiceToken(account: string = DEFAULT_PAYOUTS_ACCOUNT): Type<PayoutsService> | string {
  return account === DEFAULT_PAYOUTS_ACCOUNT ? PayoutsService : `PayoutsService:${account}`;
}
