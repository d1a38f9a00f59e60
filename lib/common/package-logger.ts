import { Logger, type LoggerService } from '@nestjs/common';
import { escapeControls } from './printable.js';

/** Where a package logger's lines go: a Nest `Logger` of a context, or a `LoggerService` given to a class. */
export type LogTarget = Pick<LoggerService, 'log' | 'warn' | 'error'>;

/**
 * The one way the package writes to a log: every line passes through `escapeControls`, whatever it quotes (a
 * `request_id`, an event type, a dedupe key, an error's message), so that a value from outside can neither forge a
 * line (CR, LF, U+2028) nor drive an operator's terminal (ESC, BEL, C1 controls, bidirectional controls). Values are
 * still shown with `printable()` where the line names them, for the quoting; this is what makes a line safe even where
 * one is missed. `test/architecture/log-lines.spec.ts` holds every logger of `lib/` to this class.
 */
export class PackageLogger {
  private readonly target: LogTarget;

  /** `context` names a Nest `Logger` (the app's logger, under that context), or is where the lines go. */
  constructor(context: string | LogTarget) {
    this.target = typeof context === 'string' ? new Logger(context) : context;
  }

  log(message: string): void {
    this.target.log(escapeControls(message));
  }

  warn(message: string): void {
    this.target.warn(escapeControls(message));
  }

  /** With `thrown`, its stack follows the line, its frames one a line and its message escaped like the line. */
  error(message: string, ...thrown: [] | [unknown]): void {
    if (thrown.length === 0) this.target.error(escapeControls(message));
    else this.target.error(escapeControls(message), printableStack(thrown[0]));
  }
}

/** Where the frames of a V8 stack start: the first line that reads `    at …`. */
const FIRST_FRAME = /\n\s+at /;

/**
 * What thrown looks like in the log: its stack, whose heading (`Name: message`, the message from anywhere) is escaped
 * into one line, and whose frames each stay on a line of their own, escaped too.
 */
export function printableStack(thrown: unknown): string {
  if (!(thrown instanceof Error)) return escapeControls(String(thrown));
  const { stack } = thrown;
  if (typeof stack !== 'string') return escapeControls(`${thrown.name}: ${thrown.message}`);
  const heading = thrown.message === '' ? thrown.name : `${thrown.name}: ${thrown.message}`;
  const framesAt =
    stack.startsWith(heading) && stack[heading.length] === '\n' ? heading.length : stack.search(FIRST_FRAME);
  if (framesAt === -1) return escapeControls(stack);
  const frames = stack.slice(framesAt + 1).split('\n');
  return [escapeControls(stack.slice(0, framesAt)), ...frames.map((frame) => escapeControls(frame))].join('\n');
}
