import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import { InvalidArgument } from './command-line.js';
import { escapeControls } from './printable.js';
import { REDACTED } from './redacted-secret.js';

/** Where a command prints: one line per call (the usage texts are several). */
export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
}

/** Bad options, an unreadable file, or a host or Redis that cannot be reached: what a person can fix. */
export const EXIT_USAGE = 2;
/** A failure nobody expected, a defect of the command (sysexits' EX_SOFTWARE), so no script reads it as an outcome. */
export const EXIT_DEFECT = 70;

/**
 * Output to a terminal: every line escaped (`\u001b`, BEL, C1, bidi controls and the rest), the line breaks of a
 * multi-line text kept. Each value is escaped where a line is built, so that a line break in it shows as `\n`; this
 * is the net under them, so that nothing a command prints can move the cursor or retitle the window.
 */
export function terminalOutput(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): CommandOutput {
  const safe = (text: string) =>
    `${text
      .split('\n')
      .map((line) => escapeControls(line))
      .join('\n')}\n`;
  return { out: (line) => stdout.write(safe(line)), err: (line) => stderr.write(safe(line)) };
}

/** The same output with `hide` applied to every line. */
export function hiddenIn(output: CommandOutput, hide: (line: string) => string): CommandOutput {
  return { out: (line) => output.out(hide(line)), err: (line) => output.err(hide(line)) };
}

/**
 * Runs a command and turns what it throws into an exit status, never a stack trace: a bad option (`InvalidArgument`,
 * whose message shows only what is safe to show, or a `PayoutsConfigError`, whose message never holds a value) exits 2
 * with its message; anything else is a defect, which exits 70 with its message, `hideSecrets` applied.
 */
export async function runCommand(
  command: string,
  run: () => Promise<number>,
  output: CommandOutput,
  hideSecrets: (line: string) => string,
): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof InvalidArgument || error instanceof PayoutsConfigError) {
      output.err(`Error: ${error.message}`);
      output.err(`Run "nestjs-payouts ${command} --help" for the options.`);
      return EXIT_USAGE;
    }
    output.err(describeDefect(command, error, hideSecrets));
    return EXIT_DEFECT;
  }
}

/** The line for a failure nobody expected: the error's name and message, `hideSecrets` applied, never its stack. */
export function describeDefect(command: string, error: unknown, hideSecrets: (line: string) => string): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return `Error: nestjs-payouts ${command} failed unexpectedly (${hideSecrets(message)}). Please report it.`;
}

/** Shorter values are left alone: hiding every "1" or "eu" would garble the message and protect nothing. */
const MIN_SECRET_LENGTH = 4;

/**
 * Hides in a line what may be secret on a command line: every argument that is not an option's name (and every
 * option's `=value`), the user name, password and query values of any of them that is a URL, and the credentials
 * the commands read from the environment (`REDIS_URL`, `DATABASE_URL`, `PAYOUTS_API_KEY`, `PAYOUTS_ACCESS_TOKEN`).
 */
export function commandLineSecretsHidden(args: readonly string[], env: NodeJS.ProcessEnv): (line: string) => string {
  const values = args.map((arg) => (arg.startsWith('-') ? /^--?[^=]+=(.*)$/s.exec(arg)?.[1] : arg));
  values.push(env.REDIS_URL, env.DATABASE_URL, env.PAYOUTS_API_KEY, env.PAYOUTS_ACCESS_TOKEN);
  const secrets = new Set<string>();
  for (const value of values) {
    if (value === undefined) continue;
    for (const part of [value, ...urlParts(value)]) {
      if (part.length >= MIN_SECRET_LENGTH) secrets.add(part).add(encodeURIComponent(part));
    }
  }
  // Longest first, so that a secret containing another is hidden whole.
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  return (line) => ordered.reduce((hidden, secret) => hidden.split(secret).join(REDACTED), line);
}

function urlParts(value: string): string[] {
  if (!URL.canParse(value)) return [];
  const url = new URL(value);
  const raw = [url.username, url.password, ...url.searchParams.values()];
  return [...raw, ...raw.map(safeDecode)].filter((part): part is string => part !== undefined && part !== '');
}

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}
