import { IsISO4217CurrencyCode, IsString, IsUppercase, Matches } from '../../common/class-validator-files.js';
import type { PayoutAmount } from '../create-payout-request.interface.js';
import { FitsCurrencyFractionDigits } from './fits-currency-fraction-digits.decorator.js';
import { IsRequired } from './is-required.decorator.js';
import { POSITIVE_DECIMAL } from './payout-field-patterns.js';

export class PayoutAmountDto implements PayoutAmount {
  @Matches(POSITIVE_DECIMAL, { message: '$property must be a positive decimal string with a dot, such as "125.50"' })
  @FitsCurrencyFractionDigits('currency_code')
  @IsString()
  @IsRequired()
  value!: string;

  @IsISO4217CurrencyCode({ message: '$property must be an ISO 4217 currency code, such as "KES"' })
  @IsUppercase({ message: '$property must be in capitals' })
  @IsString()
  @IsRequired()
  currency_code!: string;
}
