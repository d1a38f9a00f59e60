import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PaymentMethodNotification } from 'nestjs-payouts';
import { parsePaymentMethodNotification } from '../../lib/notifications/message/payment-method-notification.parser.js';

/*
 * The route validates with a hand-written parser for speed; the class-validator decorators on the DTO classes
 * state the rules. Over generated notifications, valid and broken in every field, both must give the same verdict,
 * fail on the same field paths, and produce the same object.
 */

const garbage = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -5, max: 3000 }),
  fc.string({ maxLength: 6 }),
  fc.constant(''),
  fc.array(fc.integer({ max: 9, min: 0 }), { maxLength: 2 }),
  fc.dictionary(fc.constantFrom('id', 'type', 'x'), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
);
const orGarbage = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: garbage });

const eventType = orGarbage(
  fc.constantFrom('PAYMENT_METHOD_ADDED', 'PAYMENT_METHOD_REMOVED', 'PAYMENT_METHOD_EXPIRED'),
);
const timestamp = orGarbage(
  fc.oneof(
    fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((date) => date.toISOString()),
    fc.constantFrom(
      '2025-03-14',
      '2025-03-14T09:26:53Z',
      '2025-03-14T09:26:53.589+02:00',
      '2025-13-01T00:00:00Z',
      'now',
    ),
  ),
);
const nonEmpty = orGarbage(fc.string({ minLength: 1, maxLength: 8 }));
const digits = (length: number) => fc.stringMatching(new RegExp(`^\\d{${length}}$`));
const card = orGarbage(
  fc.record(
    {
      lastFour: orGarbage(fc.oneof(digits(4), digits(3), fc.constant('42a4'))),
      expirationMonth: orGarbage(
        fc.oneof(
          fc.integer({ min: 0, max: 13 }).map((m) => String(m).padStart(2, '0')),
          digits(1),
        ),
      ),
      expirationYear: orGarbage(fc.oneof(digits(4), digits(2))),
      brand: fc.string({ maxLength: 4 }),
    },
    { requiredKeys: [] },
  ),
);
const shopper = orGarbage(
  fc.record(
    {
      id: nonEmpty,
      partner_shopper_id: orGarbage(fc.string({ maxLength: 6 })),
      email: orGarbage(fc.oneof(fc.emailAddress(), fc.constantFrom('a@b', 'not-an-email', ''))),
      loyalty: fc.string({ maxLength: 3 }),
    },
    { requiredKeys: ['id'] },
  ),
);
const paymentMethod = orGarbage(
  fc.record(
    { id: nonEmpty, type: orGarbage(fc.constantFrom('card', 'wallet')), card, token: fc.string({ maxLength: 3 }) },
    { requiredKeys: ['id', 'type'] },
  ),
);
const notification = fc
  .record(
    { eventType, timestamp, shopper, paymentMethod, extra: fc.dictionary(fc.string({ maxLength: 3 }), fc.integer()) },
    { requiredKeys: ['eventType', 'timestamp', 'shopper', 'paymentMethod'] },
  )
  // What a JSON parser can produce: no undefined values.
  .map((body) => JSON.parse(JSON.stringify(body)) as Record<string, unknown>);

/** Field paths class-validator rejects, leaving out those under an already rejected field. */
function failingPaths(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent + error.property;
    return error.constraints ? [path] : failingPaths(error.children ?? [], `${path}.`);
  });
}

describe('parsePaymentMethodNotification matches the class-validator rules of PaymentMethodNotification', () => {
  it('gives the same verdict, the same failing fields and the same object', async () => {
    await fc.assert(
      fc.asyncProperty(notification, async (body) => {
        const parsed = parsePaymentMethodNotification(body);
        const instance = plainToInstance(PaymentMethodNotification, body);
        const expectedPaths = failingPaths(await validate(instance));
        expect((parsed.errors ?? []).map((error) => error.field).sort()).toEqual(expectedPaths.sort());
        if (parsed.notification) {
          expect(parsed.notification).toEqual(instance);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('covers both verdicts', () => {
    const verdicts = fc
      .sample(notification, { numRuns: 500, seed: 42 })
      .map((body) => parsePaymentMethodNotification(body).errors === undefined);
    expect(verdicts).toContain(true);
    expect(verdicts).toContain(false);
  });
});
