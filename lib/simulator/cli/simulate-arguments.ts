import { readFile } from 'node:fs/promises';
import type { NotificationOverrides } from '../simulated-notification.js';
import { isHttpHeaderName } from '../../common/http-header-name.js';
import { parseHttpUrl } from '../../common/http-url.js';
import { isJsonObject } from '../../common/json-object.js';
import { printable } from '../../common/printable.js';
import { InvalidArgument, readCommandLine } from '../../common/command-line.js';
import { timerDelayArgument, wholeNumberArgument } from '../../common/command-line-values.js';
import { urlTextWithoutSecrets } from '../../common/url-without-secrets.js';

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

const EVENT_ALIASES: Record<string, string> = {
  added: 'PAYMENT_METHOD_ADDED',
  removed: 'PAYMENT_METHOD_REMOVED',
};

/**
 * The deepest an overrides file may nest. The sample notification is three levels deep; merging and sending a file
 * nested thousands of levels would overflow the stack.
 */
const MAX_OVERRIDES_DEPTH = 64;

/** The parsed command line, or `'help'`; a bad one throws `InvalidArgument`. */
export async function parseSimulateArguments(args: string[]): Promise<SimulateInvocation | 'help'> {
  const commandLine = readCommandLine(args, {
    urlOption: '--url',
    options: {
      url: { type: 'string' },
      event: { type: 'string', default: 'added' },
      overrides: { type: 'string' },
      header: { type: 'string', multiple: true, default: [] },
      attempts: { type: 'string' },
      'interval-ms': { type: 'string' },
      'timeout-ms': { type: 'string' },
    },
  });
  if (commandLine === 'help') return 'help';
  const { values } = commandLine;
  return {
    url: parseUrl(values.url),
    eventType: parseEventType(values.event),
    headers: parseHeaders(values.header),
    attempts: wholeNumberArgument('--attempts', values.attempts, undefined, 1),
    intervalMs: timerDelayArgument('--interval-ms', values['interval-ms'], undefined, 0),
    timeoutMs: timerDelayArgument('--timeout-ms', values['timeout-ms'], undefined, 1),
    overrides: values.overrides === undefined ? undefined : await readOverrides(values.overrides),
  };
}

/** The URL usually carries the notification secret: a refused one is shown with its query values hidden, if at all. */
function parseUrl(value: string | undefined): URL {
  if (value === undefined) throw new InvalidArgument('--url is required');
  const url = parseHttpUrl(value);
  if (url) return url;
  const shown = urlTextWithoutSecrets(value);
  throw new InvalidArgument(
    '--url must be an absolute http:// or https:// URL; ' +
      (shown === undefined ? 'the value given is no URL (not shown: it may hold a secret)' : `got ${printable(shown)}`),
  );
}

function parseEventType(value: string): string {
  const eventType = EVENT_ALIASES[value] ?? value;
  if (!/^[A-Z][A-Z0-9_]*$/.test(eventType)) {
    throw new InvalidArgument(
      `--event must be added, removed, or an event type in capitals such as PAYMENT_METHOD_ADDED; got ${printable(value)}`,
    );
  }
  return eventType;
}

/**
 * What Node's HTTP client puts in a header value: tab, visible ASCII and Latin-1. CR and LF would split the request,
 * and Node throws for them, for other controls and for anything beyond Latin-1 (an emoji).
 */
const HEADER_VALUE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;

/** A header may carry the secret: its value is never shown, nor a name that is not one (the value may be in it). */
function parseHeaders(values: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [index, value] of values.entries()) {
    const separator = value.indexOf(':');
    const name = value.slice(0, Math.max(separator, 0)).trim();
    if (!isHttpHeaderName(name)) {
      throw new InvalidArgument(
        `--header must look like "Name: value", the name made of letters, digits and !#$%&'*+-.^_\`|~; ` +
          `header #${index + 1} is not (not shown: it may hold a secret)`,
      );
    }
    const headerValue = value.slice(separator + 1).trim();
    if (!HEADER_VALUE.test(headerValue)) {
      throw new InvalidArgument(
        `--header ${printable(name)} has a value no HTTP header can carry: a line break, another control character, ` +
          'or a character beyond Latin-1 such as an emoji (the value is not shown)',
      );
    }
    headers[name.toLowerCase()] = headerValue;
  }
  return headers;
}

async function readOverrides(path: string): Promise<NotificationOverrides> {
  const file = `the --overrides file ${printable(path)}`;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new InvalidArgument(`cannot read ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
  let overrides: unknown;
  try {
    overrides = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgument(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!isJsonObject(overrides)) {
    throw new InvalidArgument(`${file} must contain a JSON object, such as {"shopper":{"email":"ada@example.com"}}`);
  }
  if (depthOf(overrides) > MAX_OVERRIDES_DEPTH) {
    throw new InvalidArgument(`${file} nests objects and arrays more than ${MAX_OVERRIDES_DEPTH} levels deep`);
  }
  return overrides as NotificationOverrides;
}

/** How deep objects and arrays nest in a parsed JSON value, walked without recursion (it may be very deep). */
function depthOf(root: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[root, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next;
    if (value === null || typeof value !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_OVERRIDES_DEPTH) return deepest;
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
  return deepest;
}
