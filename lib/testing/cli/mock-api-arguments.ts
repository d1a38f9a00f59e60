import { parseArgs } from 'node:util';
import { commandLineProblem } from '../../common/command-line.js';
import { printable } from '../../common/printable.js';
import { isWholeNumber } from '../../common/whole-number.js';
import { isHeaderSafeCredential } from '../../payouts/header-safe-credential.js';

export const MOCK_API_USAGE = `Usage: nestjs-payouts mock-api [options]

Runs a mock of the payouts API for an app to call: POST /payouts with both credential headers and
the body checked, as MockPayoutsApi of nestjs-payouts/testing does. Prints its URL, then one line
per request, credentials hidden. Stops on Ctrl+C (SIGINT) or SIGTERM.

Options:
  --port <n>              The port to listen on, 0 for a free one (default: 4010)
  --host <address>        The address to listen on (default: 127.0.0.1, this machine only)
  --api-key <value>       The X-API-Key to accept (default: $PAYOUTS_API_KEY, else one made up and printed)
  --access-token <value>  The bearer token to accept (default: $PAYOUTS_ACCESS_TOKEN, else one made up
                          and printed). Other users of the machine can read a command line: prefer the
                          environment variables.
  --latency-ms <n>        A wait before every answer, in milliseconds (default: 0)
  -h, --help              Show this help

Exit status: 0 once stopped by a signal, 2 for invalid options or an address it cannot listen on.`;

export const DEFAULT_MOCK_API_PORT = 4010;

export interface MockApiInvocation {
  port: number;
  host: string;
  /** Given on the command line or in the environment; undefined to make one up. */
  apiKey: string | undefined;
  accessToken: string | undefined;
  latencyMs: number;
}

/** The parsed command line, `'help'`, or the message of the first problem found (never echoing a credential). */
export type MockApiArguments = MockApiInvocation | 'help' | { problem: string };

export function parseMockApiArguments(args: string[], env: NodeJS.ProcessEnv): MockApiArguments {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        'api-key': { type: 'string' },
        'access-token': { type: 'string' },
        'latency-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return commandLineProblem(error);
  }
  if (values.help) return 'help';
  const port = wholeNumber(values.port, DEFAULT_MOCK_API_PORT);
  if (port === undefined || port > 65_535)
    return { problem: `--port must be a port from 0 to 65535; got ${printable(values.port ?? '')}` };
  const latencyMs = wholeNumber(values['latency-ms'], 0);
  if (latencyMs === undefined) {
    return {
      problem: `--latency-ms must be a whole number of milliseconds; got ${printable(values['latency-ms'] ?? '')}`,
    };
  }
  if (values.host === '') return { problem: '--host must be an address such as 127.0.0.1' };
  const apiKey = values['api-key'] ?? (env.PAYOUTS_API_KEY || undefined);
  const accessToken = values['access-token'] ?? (env.PAYOUTS_ACCESS_TOKEN || undefined);
  for (const [name, value] of [
    ['--api-key (or PAYOUTS_API_KEY)', apiKey],
    ['--access-token (or PAYOUTS_ACCESS_TOKEN)', accessToken],
  ] as const) {
    if (value !== undefined && !isHeaderSafeCredential(value)) {
      return { problem: `${name} must be printable characters without spaces (the value is not shown)` };
    }
  }
  return { port, host: values.host, apiKey, accessToken, latencyMs };
}

function wholeNumber(value: string | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  return isWholeNumber(number, 0) ? number : undefined;
}
