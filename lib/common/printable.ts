/**
 * Characters that must never reach a terminal or a log line raw: C0 controls (CR and LF forge lines, ESC starts a
 * terminal sequence), DEL, C1 controls (U+009B is a one-character ESC [), the Unicode line and paragraph separators
 * (new lines to many viewers), and the bidirectional controls (they reorder what an operator reads).
 */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Longest value shown; longer ones are cut and end in `…`. */
const MAX_PRINTED = 100;

function escapeUnsafe(char: string): string {
  switch (char) {
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
    default:
      return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  }
}

/**
 * Text from outside (a request, a notification, job data) made safe for one line of a log or a terminal: every unsafe
 * character escaped as `\n`, `\r`, `\t` or `\uXXXX`, nothing else changed, cut at `max` characters.
 */
export function escapeControls(value: string, max = Number.POSITIVE_INFINITY): string {
  const cut = value.length > max ? `${value.slice(0, max)}…` : value;
  return cut.replace(UNSAFE, escapeUnsafe);
}

/**
 * A value from outside as it may appear in a log line: as is when plain, else quoted (see {@link quoted}); 100
 * characters at most.
 */
export function printable(value: string): string {
  if (/^[\w./[\]+-]{1,100}$/.test(value)) return value;
  return quoted(value.length > MAX_PRINTED ? `${value.slice(0, MAX_PRINTED)}…` : value);
}

/**
 * A value from outside in double quotes, whole, as an error message names it (`Payout request "req_1"`): backslashes
 * and quotes escaped, so that the quotes show where it ends, and every unsafe character escaped (see
 * {@link escapeControls}), so that the message is one safe line wherever it is printed.
 */
export function quoted(value: string): string {
  return `"${escapeControls(value.replace(/[\\"]/g, (c) => `\\${c}`))}"`;
}
