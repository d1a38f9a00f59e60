import { IsString, Matches } from '../../common/class-validator-files.js';
import type { WalletPayoutDetails } from '../create-payout-request.interface.js';
import { IsRequired } from './is-required.decorator.js';
import { PHONE_NUMBER } from './payout-field-patterns.js';

export class WalletPayoutDetailsDto implements WalletPayoutDetails {
  @Matches(PHONE_NUMBER, { message: '$property must be 1 to 15 digits, without "+" or spaces' })
  @IsString()
  @IsRequired()
  phone_number!: string;
}
