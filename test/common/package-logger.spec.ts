import { describe, expect, it } from 'vitest';
import { PackageLogger, printableStack } from '../../lib/common/package-logger.js';
import { quoted } from '../../lib/common/printable.js';
import { RecordingLogger } from '../recording-logger.js';

/** What must never reach a log line raw: C0 (CR, LF, ESC, BEL), DEL, C1, the line separators and the bidi controls. */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const HOSTILE: readonly [string, string][] = [
  ['CR LF forging a line', 'req-1\r\n[Nest] 1  - ERROR [PayoutRuns] forged'],
  ['ESC and BEL', 'req-1\u001b]0;title\u0007\u001b[2J'],
  ['an 8-bit CSI and NEL', 'req-1\u009b31m\u0085'],
  ['U+2028 and U+2029', 'req-1\u2028forged\u2029'],
  ['bidi controls', 'req-1\u202eevil\u2066\u2069\u061c'],
  ['NUL, DEL and tab', 'req-1\u0000\u007f\t'],
];

describe('PackageLogger', () => {
  it.each(HOSTILE)('writes %s escaped, at every level, to the app logger', (_name, value) => {
    const target = new RecordingLogger();
    const logger = new PackageLogger(target);
    logger.log(`Payout ${value} resolved`);
    logger.warn(`Payout ${value} failed`);
    logger.error(`Payout ${value} failed for good`);
    for (const level of ['log', 'warn', 'error']) {
      expect(target.messages(level)).toHaveLength(1);
      expect(target.messages(level)[0]).not.toMatch(UNSAFE);
    }
    expect(target.messages('warn')[0]).toMatch(/^Payout req-1\\/);
  });

  it('escapes CR and LF by name, so the line reads as it was written', () => {
    const target = new RecordingLogger();
    new PackageLogger(target).warn('attempt 1 of 2 failed (Payout request "a\r\nb")');
    expect(target.messages('warn')).toEqual(['attempt 1 of 2 failed (Payout request "a\\r\\nb")']);
  });

  it.each(HOSTILE)(
    'keeps the frames of a stack on their lines and escapes a message with %s in its heading',
    (_name, value) => {
      const target = new RecordingLogger();
      const error = new Error(`boom ${value}`);
      new PackageLogger(target).error('A handler failed', error);
      const [line] = target.lines;
      const [message, stack] = line!.slice('error: '.length).split(' Error: ');
      expect(message).toBe('A handler failed');
      const stackLines = `Error: ${stack}`.split('\n');
      expect(stackLines[0]).toMatch(/^Error: boom req-1\\/);
      expect(stackLines.length).toBeGreaterThan(1);
      for (const frame of stackLines.slice(1)) expect(frame).toMatch(/^\s+at /);
      for (const part of stackLines) expect(part).not.toMatch(UNSAFE);
    },
  );

  it('logs the stack of an error whose name changed after it was thrown, and of what is not an error', () => {
    const renamed = new Error('boom\r\nforged');
    // The stack's heading is written when it is first read: here, before the rename.
    expect(renamed.stack).toMatch(/^Error: boom/);
    renamed.name = 'PayoutsNetworkError';
    const stack = printableStack(renamed).split('\n');
    expect(stack[0]).toBe('Error: boom\\r\\nforged');
    expect(stack[1]).toMatch(/^\s+at /);

    expect(printableStack('thrown\r\ntext')).toBe('thrown\\r\\ntext');
    expect(printableStack(undefined)).toBe('undefined');
    const stackless = new Error('no\nstack');
    stackless.stack = undefined;
    expect(printableStack(stackless)).toBe('Error: no\\nstack');
  });

  it('logs through a Nest Logger of the given context', () => {
    const logger = new PackageLogger('PayoutRuns');
    expect(() => logger.log('a line')).not.toThrow();
  });
});

describe('quoted()', () => {
  it('quotes a value whole, quotes and backslashes escaped, every unsafe character escaped', () => {
    expect(quoted('req_1')).toBe('"req_1"');
    expect(quoted('a "b" \\c')).toBe('"a \\"b\\" \\\\c"');
    expect(quoted('a\r\nb\u001b\u2028')).toBe('"a\\r\\nb\\u001b\\u2028"');
    expect(quoted('x'.repeat(300))).toBe(`"${'x'.repeat(300)}"`);
  });
});
