import { inspect } from 'node:util';
import type { LoggerService } from '@nestjs/common';

/** Keeps every log line, objects rendered in full, so tests can search them. */
export class RecordingLogger implements LoggerService {
  readonly lines: string[] = [];

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

  private record(level: string, args: unknown[]): void {
    const rendered = args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg, { depth: 10, showHidden: true })));
    this.lines.push(`${level}: ${rendered.join(' ')}`);
  }
}
