import { Type, type TypeHelpOptions } from '../../common/class-transformer-files.js';
import {
  IsDefined,
  IsEmail,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  ValidateNested,
} from '../../common/class-validator-files.js';
import { PaymentMethodEventType } from '../../interfaces/payment-method-event-type.js';
import { CARD_EXPIRATION_MONTH, CARD_EXPIRATION_YEAR, CARD_LAST_FOUR } from './notification-field-rules.js';

/*
 * These classes are what handlers receive, and their decorators are the single statement of the validation rules:
 * strict about what routing needs, lenient about the rest (a wrongly rejected notification is lost after three
 * re-sends). Unknown fields are kept and reachable through the index signatures.
 */

export class NotificationCard {
  [field: string]: unknown;

  @Matches(CARD_LAST_FOUR.pattern, { message: CARD_LAST_FOUR.message })
  lastFour!: string;

  @Matches(CARD_EXPIRATION_MONTH.pattern, { message: CARD_EXPIRATION_MONTH.message })
  expirationMonth!: string;

  @Matches(CARD_EXPIRATION_YEAR.pattern, { message: CARD_EXPIRATION_YEAR.message })
  expirationYear!: string;
}

export class NotificationShopper {
  [field: string]: unknown;

  /** The service's shopper id, `shp_…`. */
  @IsString()
  @IsNotEmpty()
  id!: string;

  /** Your own id of the shopper. */
  @IsOptional()
  @IsString()
  partner_shopper_id?: string;

  @IsOptional()
  @IsEmail()
  email?: string;
}

/** The fields every payment method carries. */
abstract class PaymentMethodIdentity {
  [field: string]: unknown;

  /** The payment method id, `pmt_…`. */
  @IsString()
  @IsNotEmpty()
  id!: string;

  /** `card` in the documented sample; other types may come. */
  @IsString()
  @IsNotEmpty()
  type!: string;
}

export class NotificationPaymentMethod extends PaymentMethodIdentity {
  /** Present for type `card`; its details are checked only on `PAYMENT_METHOD_ADDED`. */
  @Type(() => NotificationCard)
  card?: NotificationCard;
}

/** The rules of a card that was just added: its details must be complete. Used for validation only. */
export class AddedCardPaymentMethod extends PaymentMethodIdentity {
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => NotificationCard)
  card!: NotificationCard;
}

/** Chooses the rules of `paymentMethod` from the enclosing notification, which class-validator cannot see. */
function paymentMethodRules(options?: TypeHelpOptions): typeof PaymentMethodIdentity {
  return isAddedCard(options?.object.eventType, options?.object.paymentMethod)
    ? AddedCardPaymentMethod
    : NotificationPaymentMethod;
}

/** Whether a notification announces a newly added card, whose details are then required. */
export function isAddedCard(eventType: unknown, paymentMethod: unknown): boolean {
  return (
    eventType === PaymentMethodEventType.PAYMENT_METHOD_ADDED &&
    typeof paymentMethod === 'object' &&
    paymentMethod !== null &&
    (paymentMethod as { type?: unknown }).type === 'card'
  );
}

/** A payment-method notification, exactly as the service sends it. */
export class PaymentMethodNotification {
  [field: string]: unknown;

  /** `PAYMENT_METHOD_ADDED`, `PAYMENT_METHOD_REMOVED`, or a type the service adds later. */
  @IsString()
  @IsNotEmpty()
  eventType!: string;

  /** When the event occurred, ISO 8601. */
  @IsISO8601()
  timestamp!: string;

  @IsObject()
  @ValidateNested()
  @Type(() => NotificationShopper)
  shopper!: NotificationShopper;

  @IsObject()
  @ValidateNested()
  @Type(paymentMethodRules)
  paymentMethod!: NotificationPaymentMethod;
}
