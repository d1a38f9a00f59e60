import { Type } from '../../common/class-transformer-files.js';
import { Equals, IsObject, IsString, ValidateNested } from '../../common/class-validator-files.js';
import type { WalletPayoutMethod } from '../create-payout-request.interface.js';
import { IsRequired } from './is-required.decorator.js';
import { IsSnakeCase } from './is-snake-case.decorator.js';
import { PayoutBeneficiaryDto } from './payout-beneficiary.dto.js';

export class WalletPayoutMethodDto implements WalletPayoutMethod {
  @Equals('wallet')
  @IsRequired()
  type!: 'wallet';

  @IsSnakeCase()
  @IsString()
  @IsRequired()
  payment_method!: string;

  @ValidateNested()
  @IsObject()
  @Type(() => PayoutBeneficiaryDto)
  @IsRequired()
  beneficiary!: PayoutBeneficiaryDto;
}
