import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { notificationDedupeKey } from '../../lib/notifications/message/notification-dedupe-key.js';
import type { PaymentMethodNotification } from '../../lib/notifications/message/payment-method-notification.js';

/*
 * Each part of the dedupe key is `encodeURIComponent` of its field, as the keys stores already hold were written: a
 * part made only of characters it leaves alone skips the encoder, and a lone surrogate, which it refuses, is encoded
 * byte by byte. Over every kind of string a field can hold, the parts and the encoder must agree to the character.
 */

function keyOf(parts: { eventType: string; shopperId: string; paymentMethodId: string; timestamp: string }): string {
  const notification = {
    eventType: parts.eventType,
    timestamp: parts.timestamp,
    shopper: { id: parts.shopperId },
    paymentMethod: { id: parts.paymentMethodId, type: 'card' },
  } as PaymentMethodNotification;
  return notificationDedupeKey(notification);
}

const ascii = fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((code) => String.fromCharCode(code)) });
const wellFormed = fc.oneof(
  ascii,
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', 'pmt_000000000042', '2025-03-14T09:26:53.589Z', "a-_.!~*'()b", '%3A', 'é:ü', '\u0000\u007f'),
);

describe('notificationDedupeKey', () => {
  it('encodes each part as encodeURIComponent does, for ASCII and other strings', () => {
    fc.assert(
      fc.property(
        wellFormed,
        wellFormed,
        wellFormed,
        wellFormed,
        (eventType, shopperId, paymentMethodId, timestamp) => {
          const key = keyOf({ eventType, shopperId, paymentMethodId, timestamp });
          const expected = [eventType, shopperId, paymentMethodId, timestamp].map(encodeURIComponent).join(':');
          if (expected.length <= 256) expect(key).toBe(expected);
          else expect(key).toMatch(/^sha256:[\w-]{43}$/);
        },
      ),
      { numRuns: 3000, seed: 31 },
    );
  });

  it('leaves an id that needs no encoding as it is, and escapes every reserved ASCII character', () => {
    expect(
      keyOf({
        eventType: 'PAYMENT_METHOD_ADDED',
        shopperId: 'shp_7Hq2LmX9',
        paymentMethodId: 'pmt_000000000042',
        timestamp: '2025-03-14T09:26:53.589Z',
      }),
    ).toBe('PAYMENT_METHOD_ADDED:shp_7Hq2LmX9:pmt_000000000042:2025-03-14T09%3A26%3A53.589Z');
    expect(keyOf({ eventType: 'E', shopperId: ' /?#%:', paymentMethodId: '\u0000\u001f\u007f', timestamp: 't' })).toBe(
      'E:%20%2F%3F%23%25%3A:%00%1F%7F:t',
    );
  });

  it('encodes a lone surrogate as the three bytes of its code unit, and a pair as its code point', () => {
    const key = keyOf({ eventType: 'E', shopperId: 'a\udfffb', paymentMethodId: '\ud83d\ude00:', timestamp: 't' });
    expect(key).toBe('E:a%ED%BF%BFb:%F0%9F%98%80%3A:t');
  });
});
