import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonText } from '../../lib/queue/json-text.js';

describe('jsonText', () => {
  it('writes what JSON.stringify writes, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonText(value)).toBe(JSON.stringify(value));
      }),
    );
  });

  it('writes class instances, dates and the values JSON leaves out as JSON.stringify does', () => {
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
  });

  it('writes a value nested 100,000 levels deep, which JSON.stringify cannot', () => {
    let nested: unknown = 'bottom';
    for (let level = 0; level < 100_000; level++) nested = { x: [nested] };

    expect(() => JSON.stringify(nested)).toThrow(RangeError);
    const text = jsonText(nested);
    expect(text.startsWith('{"x":[{"x":[')).toBe(true);
    expect(text.length).toBe(100_000 * '{"x":[]}'.length + '"bottom"'.length);
  });
});
