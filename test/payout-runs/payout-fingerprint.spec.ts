import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CreatePayoutRequest, PayoutValidationError } from 'nestjs-payouts';
import { payoutFingerprint } from '../../lib/payout-runs/payout-job.js';

/*
 * A payout's fingerprint is kept in the ledger for the dedupe window, so that the same `request_id` enqueued again is
 * told apart from one reused for a different body. A version that wrote it differently would refuse, as a conflict,
 * the same payout enqueued again across an upgrade: the canonical JSON it hashes is pinned here to the character.
 */

const sha256 = (text: string) => hash('sha256', text, 'hex');

/** The canonical form by its definition: keys sorted by `sort()`, `undefined` members left out, JSON's own values. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const object = value as Record<string, unknown>;
  const members = Object.keys(object)
    .filter((key) => object[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`);
  return `{${members.join(',')}}`;
}

/** `value` with the keys of each object in reverse order, `undefined` members kept. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .toReversed()
      .map(([key, item]) => [key, reversed(item)]),
  );
}

const asRequest = (value: unknown) => value as CreatePayoutRequest;

describe('payoutFingerprint', () => {
  it('is the SHA-256 of the body as JSON with its keys in code-unit order and undefined members left out', () => {
    const body = {
      request_id: 'fp-1',
      reference: 'Ré "März" \\ 💸',
      amount: { value: '125.50', currency_code: 'KES' },
      payout_method: {
        type: 'wallet',
        beneficiary: { name: 'Amina', payout_method_details: { phone_number: '254712345678' } },
        payment_method: 'mobile_money',
      },
      metadata: { b: [3, { z: 1, a: null }, 'x', undefined], '10': true, '9': false, Z: 1.5e21, a: undefined, é: -0 },
      note: '\uD800',
    };

    expect(payoutFingerprint(asRequest(body))).toBe(
      sha256(
        '{"amount":{"currency_code":"KES","value":"125.50"},' +
          '"metadata":{"10":true,"9":false,"Z":1.5e+21,"b":[3,{"a":null,"z":1},"x",null],"é":0},' +
          '"note":"\\ud800",' +
          '"payout_method":{"beneficiary":{"name":"Amina","payout_method_details":{"phone_number":"254712345678"}},' +
          '"payment_method":"mobile_money","type":"wallet"},' +
          '"reference":"Ré \\"März\\" \\\\ 💸","request_id":"fp-1"}',
      ),
    );
  });

  it('is that of the canonical form for any JSON body, and the same with the keys of every object in another order', () => {
    const member = fc.option(fc.jsonValue({ maxDepth: 4 }), { nil: undefined, freq: 8 });
    const body = fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), member, { maxKeys: 8 });
    fc.assert(
      fc.property(body, (value) => {
        const fingerprint = payoutFingerprint(asRequest(value));
        expect(fingerprint).toBe(sha256(canonical(value)));
        expect(payoutFingerprint(asRequest(reversed(value)))).toBe(fingerprint);
      }),
      { numRuns: 500 },
    );
  });

  it('names the top-level field of a value JSON cannot hold, and only a plain name', () => {
    const refusal = (body: unknown) => {
      try {
        payoutFingerprint(asRequest(body));
      } catch (error) {
        expect(error).toBeInstanceOf(PayoutValidationError);
        return (error as PayoutValidationError).errors;
      }
      throw new Error('expected a refusal');
    };
    expect(refusal({ request_id: 'a', extra: [{ count: 1n }] })).toEqual([
      { path: 'extra', messages: ['must hold JSON values: a bigint is not one'] },
    ]);
    expect(refusal({ request_id: 'a', 'what: sk_live_named_in_a_key': { count: 1n } })).toEqual([
      { path: '(a field)', messages: ['must hold JSON values: a bigint is not one'] },
    ]);
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(refusal({ request_id: 'a', loop })).toEqual([
      { path: 'loop', messages: ['must not nest more than 64 levels deep'] },
    ]);
  });
});
