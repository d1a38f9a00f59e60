import { inspect } from 'node:util';
import type { LoggerService } from '@nestjs/common';

/** A Nest logger that keeps every call, so tests can assert on what the module logs and search it for secrets. */
export class RecordingLogger implements LoggerService {
  /** Every call as `level: message …`, its other arguments (stack, context) rendered in full. */
  readonly lines: string[] = [];
  readonly #messages: { level: string; message: string }[] = [];

  log(...args: unknown[]): void {
    this.record('log', args);
  }
  error(...args: unknown[]): void {
    this.record('error', args);
  }
  warn(...args: unknown[]): void {
    this.record('warn', args);
  }
  debug(...args: unknown[]): void {
    this.record('debug', args);
  }
  verbose(...args: unknown[]): void {
    this.record('verbose', args);
  }
  fatal(...args: unknown[]): void {
    this.record('fatal', args);
  }

  /** The messages (first arguments) logged at `level`. */
  messages(level: string): string[] {
    return this.#messages.filter((entry) => entry.level === level).map((entry) => entry.message);
  }

  private record(level: string, args: unknown[]): void {
    const rendered = args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg, { depth: 10, showHidden: true })));
    this.lines.push(`${level}: ${rendered.join(' ')}`);
    this.#messages.push({ level, message: String(args[0]) });
  }
}
