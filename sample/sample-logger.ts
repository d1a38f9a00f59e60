import type { LoggerService } from '@nestjs/common';

/** Nest's start-up lines, hidden in the demo run so the steps stand out. */
const START_UP_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/** Prints the app's log lines indented under the current step, as `[Context] message`. */
export class SampleLogger implements LoggerService {
  constructor(private readonly showStartUp: boolean) {}

  log(message: unknown, context?: string): void {
    this.print('', message, context);
  }

  warn(message: unknown, context?: string): void {
    this.print('WARN ', message, context);
  }

  error(message: unknown, ...rest: unknown[]): void {
    const context = rest.at(-1);
    this.print('ERROR ', message, typeof context === 'string' ? context : undefined);
  }

  private print(level: string, message: unknown, context: string | undefined): void {
    if (!this.showStartUp && context !== undefined && START_UP_CONTEXTS.has(context)) return;
    process.stdout.write(`   ${level}[${context ?? 'App'}] ${String(message)}\n`);
  }
}
