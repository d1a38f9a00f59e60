import { InvalidArgument, readCommandLine } from '../../common/command-line.js';
import { timerDelayArgument } from '../../common/command-line-values.js';
import { printable } from '../../common/printable.js';
import { isWholeNumber } from '../../common/whole-number.js';
import { isHeaderSafeCredential } from '../../payouts/header-safe-credential.js';

export const MOCK_API_USAGE = `Usage: nestjs-payouts mock-api [options]

Runs a mock of the payouts API for an app to call, as MockPayoutsApi of nestjs-payouts/testing does:
POST /payouts creates a payout, both credential headers and the body checked; GET /payouts/<id>
answers a payout by its request_id or its own id (po_…), as a reconcile lookup asks. Prints its
URL, then one line per request, credentials hidden. Stops on Ctrl+C (SIGINT) or SIGTERM.

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

/** The parsed command line, or `'help'`; a bad one throws `InvalidArgument`, whose message never shows a credential. */
export function parseMockApiArguments(args: string[], env: NodeJS.ProcessEnv): MockApiInvocation | 'help' {
  const commandLine = readCommandLine(args, {
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      'api-key': { type: 'string' },
      'access-token': { type: 'string' },
      'latency-ms': { type: 'string' },
    },
  });
  if (commandLine === 'help') return 'help';
  const { values } = commandLine;
  const port = values.port === undefined ? DEFAULT_MOCK_API_PORT : /^\d+$/.test(values.port) ? Number(values.port) : -1;
  if (!isWholeNumber(port, 0) || port > 65_535) {
    throw new InvalidArgument(`--port must be a port from 0 to 65535; got ${printable(values.port ?? '')}`);
  }
  const latencyMs = timerDelayArgument('--latency-ms', values['latency-ms'], 0, 0);
  if (values.host === '') throw new InvalidArgument('--host must be an address such as 127.0.0.1');
  const apiKey = values['api-key'] ?? (env.PAYOUTS_API_KEY || undefined);
  const accessToken = values['access-token'] ?? (env.PAYOUTS_ACCESS_TOKEN || undefined);
  for (const [name, value] of [
    ['--api-key (or PAYOUTS_API_KEY)', apiKey],
    ['--access-token (or PAYOUTS_ACCESS_TOKEN)', accessToken],
  ] as const) {
    if (value !== undefined && !isHeaderSafeCredential(value)) {
      throw new InvalidArgument(`${name} must be printable characters without spaces (the value is not shown)`);
    }
  }
  return { port, host: values.host, apiKey, accessToken, latencyMs };
}
