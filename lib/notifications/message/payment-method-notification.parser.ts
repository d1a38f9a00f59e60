import { isISO8601 } from '../../common/class-validator-files.js';
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
import { findPrototypeKey, joinPath, prototypeKeyPath } from './prototype-key.js';

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
 * One rule has no decorator: a valid body has no key that could replace a prototype (see `prototype-key.ts`).
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
  if (!isTimestamp(timestamp)) fail('timestamp', 'must be an ISO 8601 date-time string');

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
  // Copying visits every key of the objects handlers receive; the values they hold besides those objects (unknown
  // fields) are searched for prototype keys as they are copied.
  const notification = new PaymentMethodNotification();
  const notificationShopper = new NotificationShopper();
  const method = new NotificationPaymentMethod();
  let prototypeKey =
    copyFields(notification, body, '', storeNotificationField) ??
    copyFields(notificationShopper, shopper as JsonObject, 'shopper', storeShopperField) ??
    copyFields(method, paymentMethod as JsonObject, 'paymentMethod', storePaymentMethodField);
  if (isJsonObject(method.card)) {
    const card = new NotificationCard();
    prototypeKey ??= copyFields(card, method.card, 'paymentMethod.card', storeCardField);
    method.card = card;
  }
  if (prototypeKey !== undefined) return { errors: [{ field: prototypeKey, message: PROTOTYPE_KEY }] };
  notification.shopper = notificationShopper;
  notification.paymentMethod = method;
  return { notification };
}

/** What a `FieldStore` returns for a key that is not one of the class's declared fields. */
const UNDECLARED = Symbol('undeclared');
/** What a `FieldStore` returns for one of the objects copied on their own (and searched for prototype keys then). */
const NESTED = Symbol('nested');

/**
 * Stores `source`'s own field `key` in `target`'s declared field of that name, and returns its value: read and stored
 * by name, which costs a fraction of a read and a store by a key only known at run time, as every class's several
 * fields make them. `UNDECLARED` when `key` is not a declared field; `NESTED` when the value is one of the objects a
 * valid notification has, copied on their own: the shopper, the payment method, and its card when it is an object.
 */
type FieldStore<T> = (target: T, source: JsonObject, key: string) => unknown;

const storeNotificationField: FieldStore<PaymentMethodNotification> = (target, source, key) => {
  switch (key) {
    case 'eventType':
      return (target.eventType = source.eventType as string);
    case 'timestamp':
      return (target.timestamp = source.timestamp as string);
    case 'shopper':
      target.shopper = source.shopper as NotificationShopper;
      return NESTED;
    case 'paymentMethod':
      target.paymentMethod = source.paymentMethod as NotificationPaymentMethod;
      return NESTED;
    default:
      return UNDECLARED;
  }
};

const storeShopperField: FieldStore<NotificationShopper> = (target, source, key) => {
  switch (key) {
    case 'id':
      return (target.id = source.id as string);
    case 'partner_shopper_id':
      return (target.partner_shopper_id = source.partner_shopper_id as string);
    case 'email':
      return (target.email = source.email as string);
    default:
      return UNDECLARED;
  }
};

const storePaymentMethodField: FieldStore<NotificationPaymentMethod> = (target, source, key) => {
  switch (key) {
    case 'id':
      return (target.id = source.id as string);
    case 'type':
      return (target.type = source.type as string);
    case 'card': {
      const card = (target.card = source.card as NotificationCard);
      return isJsonObject(card) ? NESTED : card;
    }
    default:
      return UNDECLARED;
  }
};

const storeCardField: FieldStore<NotificationCard> = (target, source, key) => {
  switch (key) {
    case 'lastFour':
      return (target.lastFour = source.lastFour as string);
    case 'expirationMonth':
      return (target.expirationMonth = source.expirationMonth as string);
    case 'expirationYear':
      return (target.expirationYear = source.expirationYear as string);
    default:
      return UNDECLARED;
  }
};

/**
 * The UTC form the service's sample uses, which `isISO8601` accepts too: tested first, as `isISO8601`'s pattern,
 * covering every ISO 8601 form, costs several times as much.
 */
const UTC_DATE_TIME =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?Z$/;

function isTimestamp(value: unknown): boolean {
  return typeof value === 'string' && (UTC_DATE_TIME.test(value) || isISO8601(value));
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** `@IsOptional()` skips `null` as well as a missing value. */
function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * Copies own fields, unknown ones included, and returns the path of the first key that could replace a prototype
 * (see `prototype-key.ts`), in `source` or in the values it holds, but for the nested objects `store` names, which are
 * copied (and searched) in turn. Declared fields are stored by `store`, the others by their key. `constructor` is
 * skipped, as class-transformer does; `__proto__` is never copied.
 */
function copyFields<T extends object>(
  target: T,
  source: JsonObject,
  path: string,
  store: FieldStore<T>,
): string | undefined {
  let found: string | undefined;
  for (const key of Object.keys(source)) {
    if (key === '__proto__' || key === 'constructor') {
      const prototypeKey = prototypeKeyPath(path, key, source[key]);
      if (prototypeKey !== undefined) return prototypeKey;
      continue;
    }
    let value = store(target, source, key);
    if (value === NESTED) continue;
    if (value === UNDECLARED) {
      value = source[key];
      (target as JsonObject)[key] = value;
    }
    if (found === undefined && typeof value === 'object' && value !== null) {
      found = findPrototypeKey(value, joinPath(path, key));
    }
  }
  return found;
}
