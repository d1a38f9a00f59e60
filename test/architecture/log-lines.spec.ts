import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE_LOGGER = 'lib/common/package-logger.ts';

/** Nest's loggers, which write a line as they get it. */
const NEST_LOGGERS = new Set(['Logger', 'LoggerService', 'ConsoleLogger']);
const NEST_IMPORT = /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'@nestjs\/common'/g;
/** A call of a logger method: `logger.warn(`, `this.logger.error(`, `deps.logger.log(`. */
const LOGGER_CALL = /\blogger\??\.(log|warn|error|debug|verbose|fatal)\(/gi;
const USES_PACKAGE_LOGGER =
  /import\s+(?:type\s+)?\{[^}]*\bPackageLogger\b[^}]*\}\s+from\s+'[./]+\/(?:common\/)?package-logger\.js'/;
/** The commands of the CLI print to the terminal themselves, each through the shared escaping of its printer. */
const IS_COMMAND_LINE = (path: string) => path === 'lib/cli.ts' || path.includes('/cli/');

/**
 * What keeps a line from bypassing `PackageLogger`, which escapes every line: Nest's loggers are imported by it alone,
 * each file that calls a logger takes it as a `PackageLogger`, and nothing outside the command line writes to the
 * console. `sources` maps `lib/...` paths to their text.
 */
export function logLineViolations(sources: ReadonlyMap<string, string>): string[] {
  const violations: string[] = [];
  for (const [path, text] of sources) {
    if (path === PACKAGE_LOGGER) continue;
    for (const [, names] of text.matchAll(NEST_IMPORT)) {
      for (const name of names!.split(',').map((part) => part.trim().replace(/^type\s+/, ''))) {
        if (NEST_LOGGERS.has(name)) violations.push(`${path}: imports ${name}; log through PackageLogger`);
      }
    }
    const calls = [...text.matchAll(LOGGER_CALL)];
    if (calls.length > 0 && !USES_PACKAGE_LOGGER.test(text)) {
      violations.push(`${path}: calls a logger (${calls[0]![0]}…) that is not a PackageLogger`);
    }
    if (!IS_COMMAND_LINE(path) && /\bconsole\.\w+\(|process\.std(?:out|err)\.write\(/.test(text)) {
      violations.push(`${path}: writes to the console; log through PackageLogger`);
    }
  }
  return violations;
}

function readSources(): Map<string, string> {
  const sources = new Map<string, string>();
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts'))
        sources.set(relative(root, path).split('\\').join('/'), readFileSync(path, 'utf8'));
    }
  };
  walk(join(root, 'lib'));
  return sources;
}

describe('log lines of lib/', () => {
  it('all go through PackageLogger, which escapes them', () => {
    const sources = readSources();
    const callSites = [...sources.values()].reduce((count, text) => count + [...text.matchAll(LOGGER_CALL)].length, 0);
    expect(callSites).toBeGreaterThan(40);
    expect(logLineViolations(sources)).toEqual([]);
  });
});

describe('the log line rule', () => {
  const check = (path: string, text: string) => logLineViolations(new Map([[path, text]]));

  it.each([
    [
      "import { Injectable, Logger } from '@nestjs/common';\nconst logger = new Logger('X');",
      'lib/queue/x.ts: imports Logger; log through PackageLogger',
    ],
    [
      "import type { LoggerService } from '@nestjs/common';\nexport function f(logger: LoggerService) {}",
      'lib/queue/x.ts: imports LoggerService; log through PackageLogger',
    ],
    [
      'export function f(logger: { warn(m: string): void }, id: string) { logger.warn(`No handler for ${id}`); }',
      'lib/queue/x.ts: calls a logger (logger.warn(…) that is not a PackageLogger',
    ],
    ["console.warn('raw');", 'lib/queue/x.ts: writes to the console; log through PackageLogger'],
    ["process.stderr.write('raw\\n');", 'lib/queue/x.ts: writes to the console; log through PackageLogger'],
  ])('refuses %j', (text, violation) => {
    expect(check('lib/queue/x.ts', text)).toEqual([violation]);
  });

  it('accepts a logger taken as a PackageLogger, and the command line printing to the terminal', () => {
    const text =
      "import type { PackageLogger } from '../common/package-logger.js';\n" +
      'export function f(logger: PackageLogger, id: string) { logger.warn(`No handler for ${id}`); }';
    expect(check('lib/queue/x.ts', text)).toEqual([]);
    expect(check('lib/queue/cli/queue-command.ts', "process.stdout.write('ok\\n');")).toEqual([]);
  });
});
