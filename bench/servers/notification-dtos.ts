import { Type } from 'class-transformer';
import {
  IsEmail,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

/**
 * What a user would write by hand: nested class-validator DTOs with the notification rules, checked per request by
 * `ValidationPipe`. Shared by the hand-written routes (2 and the anchors of `hand-written.server.ts`).
 */
class CardDto {
  @Matches(/^\d{4}$/)
  lastFour!: string;

  @Matches(/^(0[1-9]|1[0-2])$/)
  expirationMonth!: string;

  @Matches(/^\d{4}$/)
  expirationYear!: string;
}

class ShopperDto {
  @IsString()
  @IsNotEmpty()
  id!: string;

  @IsOptional()
  @IsString()
  partner_shopper_id?: string;

  @IsOptional()
  @IsEmail()
  email?: string;
}

class PaymentMethodDto {
  @IsString()
  @IsNotEmpty()
  id!: string;

  @IsString()
  @IsNotEmpty()
  type!: string;
}

/** Only an added card must carry its card details. */
class AddedPaymentMethodDto extends PaymentMethodDto {
  @ValidateIf((paymentMethod: PaymentMethodDto) => paymentMethod.type === 'card')
  @IsObject()
  @ValidateNested()
  @Type(() => CardDto)
  card?: CardDto;
}

export class NotificationDto {
  @IsString()
  @IsNotEmpty()
  eventType!: string;

  @IsISO8601()
  timestamp!: string;

  @IsObject()
  @ValidateNested()
  @Type(() => ShopperDto)
  shopper!: ShopperDto;

  @IsObject()
  @ValidateNested()
  @Type((help) => (help?.object['eventType'] === 'PAYMENT_METHOD_ADDED' ? AddedPaymentMethodDto : PaymentMethodDto))
  paymentMethod!: PaymentMethodDto;
}
