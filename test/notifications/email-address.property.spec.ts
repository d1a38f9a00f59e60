import { isEmail } from 'class-validator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isEmailAddress } from '../../lib/notifications/message/email-address.js';

/*
 * `isEmailAddress` accepts everyday addresses with a pattern and leaves the rest to class-validator's `isEmail`.
 * It must never disagree with `isEmail`: over real-looking addresses, near misses built from the characters that
 * matter to either check, and the length limits.
 */

const atom = fc.stringMatching(/^[\w!#$%&'*+/=?^`{|}~-]{1,8}$/);
const label = fc.stringMatching(/^[A-Za-z\d-]{1,8}$/);
/** Characters that each check treats specially, to build near misses. */
const tricky = fc.constantFrom('.', '-', '_', '@', '"', ' ', '\\', 'é', 'ｆ', 'ſ', 'K', '1', 'a', 'Z', 'xn--');
const nearMiss = fc
  .array(fc.oneof(tricky, atom, label), { minLength: 1, maxLength: 10 })
  .map((parts) => parts.join(''));
const assembled = fc
  .tuple(
    fc.array(fc.oneof({ weight: 4, arbitrary: atom }, { weight: 1, arbitrary: fc.constant('') }), {
      minLength: 1,
      maxLength: 3,
    }),
    fc.array(label, { minLength: 0, maxLength: 3 }),
    fc.oneof(fc.stringMatching(/^[A-Za-z]{1,4}$/), fc.constantFrom('123', 'xn--p1ai', 'c0m', 'é')),
  )
  .map(([local, labels, tld]) => `${local.join('.')}@${[...labels, tld].join('.')}`);
const repeat = (character: string, count: number) => character.repeat(count);
const atLengthLimits = fc.constantFrom(
  `${repeat('a', 64)}@example.com`,
  `${repeat('a', 65)}@example.com`,
  `shopper@${repeat('b', 63)}.com`,
  `shopper@${repeat('b', 64)}.com`,
  `shopper@example.${repeat('c', 63)}`,
  `shopper@example.${repeat('c', 64)}`,
  // 254 and 255 characters in all.
  `${repeat('a', 61)}@${repeat(`${repeat('b', 62)}.`, 3)}ccc`,
  `${repeat('a', 61)}@${repeat(`${repeat('b', 62)}.`, 3)}cccc`,
);

describe('isEmailAddress gives the verdicts of class-validator isEmail', () => {
  it('over addresses, near misses and length limits', () => {
    fc.assert(
      fc.property(fc.oneof(fc.emailAddress(), assembled, nearMiss, atLengthLimits), (value) => {
        expect(isEmailAddress(value)).toBe(isEmail(value));
      }),
      { numRuns: 5000 },
    );
  });

  it('covers both verdicts, on and off the fast path', () => {
    const everyday = 'shopper@example.com';
    const quoted = '"first last"@example.com';
    expect([isEmailAddress(everyday), isEmail(everyday)]).toEqual([true, true]);
    expect([isEmailAddress(quoted), isEmail(quoted)]).toEqual([true, true]);
    expect(isEmailAddress('shopper@example')).toBe(false);
    expect(isEmailAddress(42)).toBe(false);
  });
});
