import type { Exception } from '@opentelemetry/api';

/**
 * What a span records of an error a handler threw: its type and its stack frames, never its message, which often
 * quotes the data being handled (a database's duplicate-key message names the e-mail address). The log line of the
 * failure keeps the message, in the app's own logs.
 *
 * A stack begins with `<name>: <message>`, as many lines as the message has; those lines are dropped by their count,
 * never by how they look, since a message may hold lines that read like frames (`\n    at x (y.js:1:1) <PII>`).
 */
export function exceptionWithoutMessage(error: unknown): Exception {
  const name = error instanceof Error ? error.name : typeof error;
  const stack = error instanceof Error ? error.stack : undefined;
  if (stack === undefined) return { name };
  const headerLines = String((error as Error).message).split('\n').length;
  const frames = stack
    .split('\n')
    .slice(headerLines)
    .filter((line) => /^\s+at /.test(line));
  return { name, stack: [name, ...frames].join('\n') };
}
