import { hash } from 'node:crypto';
import { DEFAULT_PAYOUTS_ACCOUNT } from '../../payouts.constants.js';
import type { PaymentMethodNotification } from './payment-method-notification.js';

/**
 * Longest key kept as it reads. Longer keys are replaced by their SHA-256, so that what a remembered key costs has a
 * fixed ceiling, and keys stay far below the 16,384 characters past which V8 hashes a string by its length alone
 * (equal-length long keys would then collide in every `Map`).
 */
export const MAX_READABLE_DEDUPE_KEY_LENGTH = 256;

/**
 * Identifies a notification across the service's re-sends: same event, shopper, payment method and time, as
 * `eventType:shopper.id:paymentMethod.id:timestamp`, each part URI-encoded so that no id can contain the separator.
 * A key longer than `MAX_READABLE_DEDUPE_KEY_LENGTH` becomes `sha256:` and the base64url SHA-256 of that string.
 * Either way the key is ASCII and distinct notifications get distinct keys. A named account prefixes its keys with
 * `<account>/` (account names have no `/`, encoded parts neither), so that one store shared by several accounts keeps
 * them apart, while the unnamed account keeps the keys it always had.
 */
export function notificationDedupeKey(
  notification: PaymentMethodNotification,
  account: string = DEFAULT_PAYOUTS_ACCOUNT,
): string {
  const { eventType, shopper, paymentMethod, timestamp } = notification;
  // Joined, never concatenated: `a + b` makes a rope that holds on to its parts (the notification's strings) for as
  // long as a store remembers the key, more than doubling what a remembered key costs; `join` copies them into one
  // flat string.
  const key = [uriPart(eventType), uriPart(shopper.id), uriPart(paymentMethod.id), uriPart(timestamp)].join(':');
  const bounded =
    key.length <= MAX_READABLE_DEDUPE_KEY_LENGTH ? key : ['sha256', hash('sha256', key, 'base64url')].join(':');
  return account === DEFAULT_PAYOUTS_ACCOUNT ? bounded : [account, bounded].join('/');
}

/** Characters `encodeURIComponent` leaves as they are: a part made only of them needs no encoding. */
const UNRESERVED = /^[\w.!~*'()-]*$/;

/**
 * `encodeURIComponent`, which throws on a lone UTF-16 surrogate (`"\udfff"` is valid JSON). Such a string is encoded
 * code point by code point instead, a lone surrogate as the three bytes its code unit would take in UTF-8 (`%ED%BF%BF`),
 * never as U+FFFD, which would give two different ids the same key.
 */
function uriPart(value: string): string {
  if (UNRESERVED.test(value)) return value;
  try {
    return encodeURIComponent(value);
  } catch {
    let encoded = '';
    for (const codePoint of value) {
      const unit = codePoint.charCodeAt(0);
      encoded +=
        codePoint.length === 1 && unit >= 0xd800 && unit <= 0xdfff
          ? `%ED%${hex(0x80 | ((unit >> 6) & 0x3f))}%${hex(0x80 | (unit & 0x3f))}`
          : encodeURIComponent(codePoint);
    }
    return encoded;
  }
}

function hex(byte: number): string {
  return byte.toString(16).toUpperCase();
}
