import { type CommandOutput, EXIT_USAGE } from '../../common/command-output.js';
import { escapeControls } from '../../common/printable.js';
import { CredentialRedactor } from '../../payouts/credential-redactor.js';
import { MockPayoutsApi } from '../mock-payouts-api/mock-payouts-api.js';
import { MOCK_API_USAGE, parseMockApiArguments } from './mock-api-arguments.js';
import { describeCall } from './mock-call-printer.js';

const EXIT_STOPPED = 0;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * Runs `nestjs-payouts mock-api …` until SIGINT or SIGTERM, and resolves with the process exit status. Credentials
 * given on the command line or in the environment are never printed; made-up ones are printed once, since the
 * developer needs them to configure the app. A bad command line throws `InvalidArgument`.
 */
export async function runMockApiCommand(
  args: string[],
  output: CommandOutput,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const parsed = parseMockApiArguments(args, env);
  if (parsed === 'help') {
    output.out(MOCK_API_USAGE);
    return EXIT_STOPPED;
  }

  // The record hides the credential headers; this also hides a credential a client put anywhere else (a query).
  let redactor = new CredentialRedactor([]);
  let mock: MockPayoutsApi;
  try {
    mock = await MockPayoutsApi.start({
      port: parsed.port,
      host: parsed.host,
      apiKey: parsed.apiKey,
      accessToken: parsed.accessToken,
      latencyMs: parsed.latencyMs,
      onCall: (call) => output.out(redactor.text(describeCall(call))),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    output.err(`Error: cannot listen on ${escapeControls(parsed.host, 100)} port ${parsed.port} (${code}).`);
    if (code === 'EADDRINUSE') output.err('Another program uses that port: choose another with --port.');
    return EXIT_USAGE;
  }
  redactor = new CredentialRedactor([mock.apiKey, mock.accessToken!]);

  output.out(`Mock payouts API listening on ${mock.baseUrl} (POST /payouts)`);
  output.out(
    "GET /payouts/<request_id> answers a payout as a reconcile lookup asks; the payout's own id (po_…) works too.",
  );
  if (!LOOPBACK.has(parsed.host)) {
    output.out(`Listening on ${escapeControls(parsed.host, 100)}: other machines may reach it.`);
  }
  if (parsed.apiKey === undefined || parsed.accessToken === undefined) {
    output.out('Credentials made up for this run (set PAYOUTS_API_KEY and PAYOUTS_ACCESS_TOKEN to choose them):');
  } else {
    output.out('Accepting the X-API-Key and access token given (not shown).');
  }
  if (parsed.apiKey === undefined) output.out(`  PAYOUTS_API_KEY=${mock.apiKey}`);
  if (parsed.accessToken === undefined) output.out(`  PAYOUTS_ACCESS_TOKEN=${mock.accessToken}`);
  output.out(`Point the app at it with PAYOUTS_BASE_URL=${mock.baseUrl}. Press Ctrl+C to stop.`);

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await mock.close();
  output.out('Stopped.');
  return EXIT_STOPPED;
}
