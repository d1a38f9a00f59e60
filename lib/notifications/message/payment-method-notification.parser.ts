import { isISO8601 } from 'class-validator';
import { isJsonObject, type JsonObject } from '../../common/json-object.js';
import { isEmailAddress } from './email-address.js';
import {
  CARD_EXPIRATION_MONTH,
  CARD_EXPIRATION_YEAR,
  CARD_LAST_FOUR,
  type FieldRule,
} from './notification-field-rules.js';
import {
  isAddedCard,
  NotificationCard,
  NotificationPaymentMethod,
  NotificationShopper,
  PaymentMethodNotification,
} from './payment-method-notification.js';
import { findPrototypeKey } from './prototype-key.js';

/** One failing field of a rejected notification, named by its dotted path. */
export interface NotificationFieldError {
  readonly field: string;
  readonly message: string;
}

export type NotificationParseResult =
  | { readonly notification: PaymentMethodNotification; readonly errors?: undefined }
  | { readonly notification?: undefined; readonly errors: NotificationFieldError[] };

const NON_EMPTY_STRING = 'must be a non-empty string';
const OBJECT = 'must be an object';
const PROTOTYPE_KEY = "must not be a key: it could replace an object's prototype";

/**
 * Validates a parsed JSON object and builds the handler's class instances, in one pass and without reflection.
 * It applies the rules declared on the classes of `payment-method-notification.ts` with class-validator decorators;
 * a property-based test holds the two to the same verdicts. The date format is checked by the very class-validator
 * function the decorator calls, the e-mail format by `isEmailAddress`, which gives the same verdicts faster.
 * One rule has no decorator: a valid body has no key that could replace a prototype (`findPrototypeKey`).
 */
export function parsePaymentMethodNotification(body: JsonObject): NotificationParseResult {
  let errors: NotificationFieldError[] | undefined;
  const fail = (field: string, message: string): void => {
    (errors ??= []).push({ field, message });
  };
  const check = (value: unknown, field: string, rule: FieldRule): void => {
    if (typeof value !== 'string' || !rule.pattern.test(value)) fail(field, rule.message);
  };

  const { eventType, timestamp, shopper, paymentMethod } = body;
  if (!isNonEmptyString(eventType)) fail('eventType', NON_EMPTY_STRING);
  if (!isISO8601(timestamp)) fail('timestamp', 'must be an ISO 8601 date-time string');

  if (!isJsonObject(shopper)) {
    fail('shopper', OBJECT);
  } else {
    if (!isNonEmptyString(shopper.id)) fail('shopper.id', NON_EMPTY_STRING);
    if (isPresent(shopper.partner_shopper_id) && typeof shopper.partner_shopper_id !== 'string') {
      fail('shopper.partner_shopper_id', 'must be a string when present');
    }
    if (isPresent(shopper.email) && !isEmailAddress(shopper.email)) {
      fail('shopper.email', 'must be an e-mail address when present');
    }
  }

  if (!isJsonObject(paymentMethod)) {
    fail('paymentMethod', OBJECT);
  } else {
    if (!isNonEmptyString(paymentMethod.id)) fail('paymentMethod.id', NON_EMPTY_STRING);
    if (!isNonEmptyString(paymentMethod.type)) fail('paymentMethod.type', NON_EMPTY_STRING);
    if (isAddedCard(eventType, paymentMethod)) {
      const card = paymentMethod.card;
      if (!isJsonObject(card)) {
        fail('paymentMethod.card', 'must be an object with the details of the added card');
      } else {
        check(card.lastFour, 'paymentMethod.card.lastFour', CARD_LAST_FOUR);
        check(card.expirationMonth, 'paymentMethod.card.expirationMonth', CARD_EXPIRATION_MONTH);
        check(card.expirationYear, 'paymentMethod.card.expirationYear', CARD_EXPIRATION_YEAR);
      }
    }
  }

  if (errors) return { errors };
  const prototypeKey = findPrototypeKey(body);
  if (prototypeKey !== undefined) return { errors: [{ field: prototypeKey, message: PROTOTYPE_KEY }] };
  const notification = copyInto(new PaymentMethodNotification(), body);
  notification.shopper = copyInto(new NotificationShopper(), shopper as JsonObject);
  const method = copyInto(new NotificationPaymentMethod(), paymentMethod as JsonObject);
  if (isJsonObject(method.card)) {
    method.card = copyInto(new NotificationCard(), method.card);
  }
  notification.paymentMethod = method;
  return { notification };
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** `@IsOptional()` skips `null` as well as a missing value. */
function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * Copies own fields, unknown ones included. `constructor` is skipped, as class-transformer does, and so is
 * `__proto__` (already refused, see `findPrototypeKey`): assigning it would replace the instance's prototype.
 */
function copyInto<T extends object>(target: T, source: JsonObject): T {
  for (const key of Object.keys(source)) {
    if (key !== '__proto__' && key !== 'constructor') {
      (target as JsonObject)[key] = source[key];
    }
  }
  return target;
}
