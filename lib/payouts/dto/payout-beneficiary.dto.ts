import { Type } from '../../common/class-transformer-files.js';
import { IsNotEmpty, IsObject, IsString, ValidateNested } from '../../common/class-validator-files.js';
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
