import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { type PayoutResult, PayoutsService } from 'nestjs-payouts';

export interface WalletPayout {
  name: string;
  phoneNumber: string;
  /** Decimal string, such as `"125.50"`. */
  amount: string;
  currency: string;
  country: string;
  reference: string;
}

/** The sample's business code: pays a seller's earnings into their mobile wallet. */
@Injectable()
export class WalletPayoutsService {
  constructor(private readonly payouts: PayoutsService) {}

  payOut(payout: WalletPayout): Promise<PayoutResult> {
    return this.payouts.createPayout({
      payout_method: {
        type: 'wallet',
        payment_method: 'mpesa',
        beneficiary: { name: payout.name, payout_method_details: { phone_number: payout.phoneNumber } },
      },
      amount: { value: payout.amount, currency_code: payout.currency },
      country_code: payout.country,
      purpose: 'seller_earnings',
      reference: payout.reference,
      // Keep this id with your own record: it is how a payout whose outcome is unknown is reconciled.
      request_id: randomUUID(),
    });
  }
}
