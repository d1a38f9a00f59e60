import { IsNotEmpty, IsString } from '../../common/class-validator-files.js';
import { IsRequired } from './is-required.decorator.js';

/** The recipient of a non-wallet payout: only the name is checked, other fields pass through. */
export class OtherPayoutBeneficiaryDto {
  [field: string]: unknown;

  @IsNotEmpty()
  @IsString()
  @IsRequired()
  name!: string;
}
