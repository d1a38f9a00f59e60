import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonText } from '../../lib/queue/json-text.js';

/** Deeper than JSON.stringify's recursion reaches, so that jsonText writes it without recursion. */
const TOO_DEEP = 100_000;

/** `value` inside `levels` levels of `{"x":[…]}`. */
function nested(value: unknown, levels: number): unknown {
  let current = value;
  for (let level = 0; level < levels; level++) current = { x: [current] };
  return current;
}

/** What JSON.stringify would write for `nested(value, levels)`, given what it writes for `value`. */
function nestedText(text: string, levels: number): string {
  return `${'{"x":['.repeat(levels)}${text}${']}'.repeat(levels)}`;
}

describe('jsonText', () => {
  it('writes what JSON.stringify writes, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonText(value)).toBe(JSON.stringify(value));
      }),
    );
  });

  it('writes any JSON value nested too deep for JSON.stringify as JSON.stringify writes it when shallow', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const deep = nested(value, TOO_DEEP);

        expect(() => JSON.stringify(deep)).toThrow(RangeError);
        expect(jsonText(deep)).toBe(nestedText(JSON.stringify(value), TOO_DEEP));
      }),
      { numRuns: 20 },
    );
  });

  it('writes class instances, dates and the values JSON leaves out as JSON.stringify does, shallow or deep', () => {
    class Card {
      readonly lastFour = '4242';
      readonly missing = undefined;
      readonly method = () => 1;
    }
    const value = {
      card: new Card(),
      at: new Date(0),
      list: [undefined, () => 1, Number.NaN, -0],
      empty: {},
      none: [],
    };

    expect(jsonText(value)).toBe(JSON.stringify(value));
    expect(jsonText(nested(value, TOO_DEEP))).toBe(nestedText(JSON.stringify(value), TOO_DEEP));
  });

  it('writes a value nested 100,000 levels deep, which JSON.stringify cannot', () => {
    const deep = nested('bottom', TOO_DEEP);

    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const text = jsonText(deep);
    expect(text.startsWith('{"x":[{"x":[')).toBe(true);
    expect(text.length).toBe(TOO_DEEP * '{"x":[]}'.length + '"bottom"'.length);
    expect(text).toBe(nestedText('"bottom"', TOO_DEEP));
  });

  it('refuses a BigInt as JSON.stringify does, shallow or deep', () => {
    expect(() => jsonText({ amount: 1n })).toThrow(TypeError);
    expect(() => jsonText(nested({ amount: 1n }, TOO_DEEP))).toThrow(TypeError);
  });
});
