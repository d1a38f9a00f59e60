import { describe, expect, it } from 'vitest';
import { escapeControls, printable } from '../../lib/common/printable.js';

const UNSAFE = [
  ...Array.from({ length: 0x20 }, (_, code) => code),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, code) => 0x80 + code),
  0x061c,
  0x200e,
  0x200f,
  0x2028,
  0x2029,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2066,
  0x2067,
  0x2068,
  0x2069,
].map((code) => String.fromCharCode(code));

describe('printable()', () => {
  it('keeps plain values as they are', () => {
    expect(printable('PAYMENT_METHOD_ADDED')).toBe('PAYMENT_METHOD_ADDED');
    expect(printable('payouts/notifications')).toBe('payouts/notifications');
  });

  it('quotes other values and escapes quotes and backslashes', () => {
    expect(printable('a b')).toBe('"a b"');
    expect(printable('say "hi" \\o/')).toBe('"say \\"hi\\" \\\\o/"');
    expect(printable('')).toBe('""');
  });

  it.each(UNSAFE.map((char) => [char.charCodeAt(0).toString(16), char]))(
    'escapes U+%s so that no raw control reaches the line',
    (_hex, char) => {
      const shown = printable(`a${char}b`);
      expect(shown).not.toContain(char);
      expect(shown.startsWith('"a\\')).toBe(true);
      expect(shown.endsWith('b"')).toBe(true);
    },
  );

  it('escapes CR, LF and tab by name, others by code point', () => {
    expect(printable('x\r\nFAKE LINE\t')).toBe('"x\\r\\nFAKE LINE\\t"');
    expect(printable('\u001b[31mred\u0007')).toBe('"\\u001b[31mred\\u0007"');
    expect(printable('\u009b2J\u2028\u202e')).toBe('"\\u009b2J\\u2028\\u202e"');
  });

  it('cuts long values at 100 characters', () => {
    const shown = printable('é'.repeat(300));
    expect(shown).toBe(`"${'é'.repeat(100)}…"`);
  });

  it('cuts before escaping, so a cut never splits an escape', () => {
    expect(printable(`${'a'.repeat(99)}\n\n`)).toBe(`"${'a'.repeat(99)}\\n…"`);
  });
});

describe('escapeControls()', () => {
  it('escapes every unsafe character and leaves the rest, quotes included', () => {
    const text = UNSAFE.join('');
    const escaped = escapeControls(`"ok" ${text} é`);
    for (const char of UNSAFE) expect(escaped).not.toContain(char);
    expect(escaped.startsWith('"ok" \\u0000')).toBe(true);
    expect(escaped.endsWith('\\u2069 é')).toBe(true);
  });

  it('cuts at the given length', () => {
    expect(escapeControls('abcdef', 3)).toBe('abc…');
    expect(escapeControls('abc', 3)).toBe('abc');
  });
});
