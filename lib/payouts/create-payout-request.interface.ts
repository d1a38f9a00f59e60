/** Money to pay: `value` is a decimal string with a dot, such as `"125.50"`. */
export interface PayoutAmount {
  value: string;
  /** ISO 4217 code in capitals, such as `"KES"`. */
  currency_code: string;
}

export interface WalletPayoutDetails {
  /** Digits only, at most 15 (E.164 without the `+`). */
  phone_number: string;
}

export interface WalletPayoutBeneficiary {
  name: string;
  payout_method_details: WalletPayoutDetails;
}

export interface WalletPayoutMethod {
  type: 'wallet';
  /** The wallet scheme, in lowercase snake_case. */
  payment_method: string;
  beneficiary: WalletPayoutBeneficiary;
}

/**
 * Any other payout method (such as a bank transfer), sent exactly as given.
 * Only what every method shares is checked: `type` and `beneficiary.name`.
 */
export interface OtherPayoutMethod {
  type: string;
  beneficiary: { name: string; [field: string]: unknown };
  [field: string]: unknown;
}

/**
 * The body of `POST {baseUrl}/payouts`, field names exactly as on the wire.
 * `TOtherMethod` narrows the non-wallet methods a caller uses, for example
 * `CreatePayoutRequest<BankTransferPayoutMethod>`.
 */
export interface CreatePayoutRequest<TOtherMethod extends OtherPayoutMethod = OtherPayoutMethod> {
  payout_method: WalletPayoutMethod | TOtherMethod;
  amount: PayoutAmount;
  /** ISO 3166-1 alpha-2 code in capitals, such as `"KE"`. */
  country_code: string;
  /** Lowercase snake_case, such as `"salary_payment"`. */
  purpose: string;
  reference: string;
  /**
   * The caller's identifier of this payout. Retries reuse it; after an unknown outcome,
   * reconcile with it rather than sending the payout again under a new one.
   */
  request_id: string;
}

/** A request that may only use the wallet method, so TypeScript checks every wallet field. */
export type WalletPayoutRequest = CreatePayoutRequest<never>;
