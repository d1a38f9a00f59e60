import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { NotificationOverrides } from '../simulated-notification.js';
import { isHttpHeaderName } from '../../common/http-header-name.js';
import { parseHttpUrl } from '../../common/http-url.js';
import { commandLineProblem, InvalidArgument, wholeNumberArgument } from '../../common/command-line.js';

export const SIMULATE_USAGE = `Usage: nestjs-payouts simulate --url <url> [options]

Delivers a payment-method notification the way the payouts service does: a JSON POST, sent again
at an interval until the reply is HTTP 200 with {"ResultCode":0}.

Options:
  --url <url>             The notification URL, such as
                          http://localhost:3000/payouts/notifications?token=<secret>
  --event <event>         added, removed, or any event type such as PAYMENT_METHOD_ADDED (default: added)
  --overrides <file>      A JSON file merged into the sample notification
  --header <name:value>   An extra request header, such as one carrying the secret (repeatable)
  --attempts <n>          Attempts in all, the first included (default: 4)
  --interval-ms <n>       Wait between attempts in milliseconds (default: 300000, 5 minutes)
  --timeout-ms <n>        How long an attempt waits for the reply (default: 10000)
  -h, --help              Show this help

Exit status: 0 when delivered, 1 when no attempt was acknowledged,
2 for invalid options, an unreadable --overrides file, or a host that cannot be reached.`;

export interface SimulateInvocation {
  url: URL;
  eventType: string;
  overrides: NotificationOverrides | undefined;
  headers: Record<string, string>;
  attempts: number | undefined;
  intervalMs: number | undefined;
  timeoutMs: number | undefined;
}

/** The parsed command line, `'help'`, or the message of the first problem found. */
export type SimulateArguments = SimulateInvocation | 'help' | { problem: string };

const EVENT_ALIASES: Record<string, string> = {
  added: 'PAYMENT_METHOD_ADDED',
  removed: 'PAYMENT_METHOD_REMOVED',
};

export async function parseSimulateArguments(args: string[]): Promise<SimulateArguments> {
  try {
    return await parse(args);
  } catch (error) {
    return commandLineProblem(error);
  }
}

async function parse(args: string[]): Promise<SimulateInvocation | 'help'> {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      url: { type: 'string' },
      event: { type: 'string', default: 'added' },
      overrides: { type: 'string' },
      header: { type: 'string', multiple: true, default: [] },
      attempts: { type: 'string' },
      'interval-ms': { type: 'string' },
      'timeout-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  return {
    url: parseUrl(values.url),
    eventType: parseEventType(values.event),
    headers: parseHeaders(values.header),
    attempts: wholeNumberArgument('--attempts', values.attempts, undefined, 1),
    intervalMs: wholeNumberArgument('--interval-ms', values['interval-ms'], undefined, 0),
    timeoutMs: wholeNumberArgument('--timeout-ms', values['timeout-ms'], undefined, 1),
    overrides: values.overrides === undefined ? undefined : await readOverrides(values.overrides),
  };
}

function parseUrl(value: string | undefined): URL {
  if (value === undefined) throw new InvalidArgument('--url is required');
  const url = parseHttpUrl(value);
  if (!url) {
    throw new InvalidArgument(`--url must be an absolute http:// or https:// URL; got "${value}"`);
  }
  return url;
}

function parseEventType(value: string): string {
  const eventType = EVENT_ALIASES[value] ?? value;
  if (!/^[A-Z][A-Z0-9_]*$/.test(eventType)) {
    throw new InvalidArgument(
      `--event must be added, removed, or an event type in capitals such as PAYMENT_METHOD_ADDED; got "${value}"`,
    );
  }
  return eventType;
}

function parseHeaders(values: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const separator = value.indexOf(':');
    const name = value.slice(0, Math.max(separator, 0)).trim();
    if (!isHttpHeaderName(name)) {
      throw new InvalidArgument(`--header must look like "Name: value"; got a header named "${name}"`);
    }
    headers[name.toLowerCase()] = value.slice(separator + 1).trim();
  }
  return headers;
}

async function readOverrides(path: string): Promise<NotificationOverrides> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new InvalidArgument(`cannot read the --overrides file "${path}" (${(error as NodeJS.ErrnoException).code})`);
  }
  let overrides: unknown;
  try {
    overrides = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgument(`the --overrides file "${path}" is not valid JSON: ${(error as Error).message}`);
  }
  if (overrides === null || typeof overrides !== 'object' || Array.isArray(overrides)) {
    throw new InvalidArgument(
      `the --overrides file "${path}" must contain a JSON object, such as {"shopper":{"email":"ada@example.com"}}`,
    );
  }
  return overrides as NotificationOverrides;
}
