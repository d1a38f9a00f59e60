import type { CreatePayoutRequest } from 'nestjs-payouts';

/** A valid wallet payout, as in the interface spec's sample. */
export function walletPayoutRequest(requestId = 'req_0001'): CreatePayoutRequest {
  return {
    payout_method: {
      type: 'wallet',
      payment_method: 'mpesa_ke',
      beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: '254712345678' } },
    },
    amount: { value: '125.50', currency_code: 'KES' },
    country_code: 'KE',
    purpose: 'salary_payment',
    reference: 'Invoice 42 / March',
    request_id: requestId,
  };
}
