import { Type } from 'class-transformer';
import { IsNotEmpty, IsObject, IsString, ValidateNested } from 'class-validator';
import type { WalletPayoutBeneficiary } from '../create-payout-request.interface.js';
import { IsRequired } from './is-required.decorator.js';
import { WalletPayoutDetailsDto } from './wallet-payout-details.dto.js';

/** The recipient of a wallet payout. */
export class PayoutBeneficiaryDto implements WalletPayoutBeneficiary {
  @IsNotEmpty()
  @IsString()
  @IsRequired()
  name!: string;

  @ValidateNested()
  @IsObject()
  @Type(() => WalletPayoutDetailsDto)
  @IsRequired()
  payout_method_details!: WalletPayoutDetailsDto;
}
