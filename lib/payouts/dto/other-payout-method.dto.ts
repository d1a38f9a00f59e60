import { Type } from '../../common/class-transformer-files.js';
import { IsNotEmpty, IsObject, IsString, ValidateNested } from '../../common/class-validator-files.js';
import type { OtherPayoutMethod } from '../create-payout-request.interface.js';
import { IsRequired } from './is-required.decorator.js';
import { OtherPayoutBeneficiaryDto } from './other-payout-beneficiary.dto.js';

/** A payout method other than `wallet`: only what every method shares is checked. */
export class OtherPayoutMethodDto implements OtherPayoutMethod {
  [field: string]: unknown;

  @IsNotEmpty()
  @IsString()
  @IsRequired()
  type!: string;

  @ValidateNested()
  @IsObject()
  @Type(() => OtherPayoutBeneficiaryDto)
  @IsRequired()
  beneficiary!: OtherPayoutBeneficiaryDto;
}
