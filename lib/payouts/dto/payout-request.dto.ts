import { Type, type TypeHelpOptions } from '../../common/class-transformer-files.js';
import {
  IsISO31661Alpha2,
  IsNotEmpty,
  IsObject,
  IsString,
  IsUppercase,
  Matches,
  ValidateNested,
} from '../../common/class-validator-files.js';
import type { CreatePayoutRequest } from '../create-payout-request.interface.js';
import { IsRequired } from './is-required.decorator.js';
import { IsSnakeCase } from './is-snake-case.decorator.js';
import { OtherPayoutMethodDto } from './other-payout-method.dto.js';
import { NOT_BLANK } from './payout-field-patterns.js';
import { PayoutAmountDto } from './payout-amount.dto.js';
import { WalletPayoutMethodDto } from './wallet-payout-method.dto.js';

/** Wallet payouts get the full wallet checks; any other method only the shared ones. */
function payoutMethodClass(options?: TypeHelpOptions): typeof WalletPayoutMethodDto | typeof OtherPayoutMethodDto {
  const method: unknown = (options?.object as Record<string, unknown> | undefined)?.['payout_method'];
  const type = typeof method === 'object' && method !== null ? (method as { type?: unknown }).type : undefined;
  return type === 'wallet' ? WalletPayoutMethodDto : OtherPayoutMethodDto;
}

/** The body of `POST {baseUrl}/payouts`; usable with Nest's `ValidationPipe` as well. */
export class PayoutRequestDto implements CreatePayoutRequest {
  @ValidateNested()
  @IsObject()
  @Type(payoutMethodClass)
  @IsRequired()
  payout_method!: WalletPayoutMethodDto | OtherPayoutMethodDto;

  @ValidateNested()
  @IsObject()
  @Type(() => PayoutAmountDto)
  @IsRequired()
  amount!: PayoutAmountDto;

  @IsISO31661Alpha2({ message: '$property must be an ISO 3166-1 alpha-2 country code, such as "KE"' })
  @IsUppercase({ message: '$property must be in capitals' })
  @IsString()
  @IsRequired()
  country_code!: string;

  @IsSnakeCase()
  @IsString()
  @IsRequired()
  purpose!: string;

  @IsNotEmpty()
  @IsString()
  @IsRequired()
  reference!: string;

  @Matches(NOT_BLANK, { message: '$property must not be empty or blank' })
  @IsString()
  @IsRequired()
  request_id!: string;
}
