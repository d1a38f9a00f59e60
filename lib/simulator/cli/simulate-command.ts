import {
  DEFAULT_DELIVERY_ATTEMPTS,
  DEFAULT_DELIVERY_INTERVAL_MS,
  type DeliveryAttempt,
  deliver,
} from '../deliver-notification.js';
import { paymentMethodNotification } from '../simulated-notification.js';
import { parseSimulateArguments, SIMULATE_USAGE } from './simulate-arguments.js';
import { secretRedactor } from './secret-redaction.js';
import { describeAttempt, describeDuration, describeOutcome, describeStart, displayUrl } from './delivery-printer.js';

export const EXIT_DELIVERED = 0;
export const EXIT_NOT_DELIVERED = 1;
export const EXIT_USAGE = 2;

export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
}

/** Raised from `onAttempt` to stop at once when the first attempt finds nothing listening. */
class HostUnreachable extends Error {}

/** Runs `nestjs-payouts simulate …` and resolves with the process exit status. */
export async function runSimulateCommand(args: string[], output: CommandOutput): Promise<number> {
  const parsed = await parseSimulateArguments(args);
  if (parsed === 'help') {
    output.out(SIMULATE_USAGE);
    return EXIT_DELIVERED;
  }
  if ('problem' in parsed) {
    output.err(`Error: ${parsed.problem}`);
    output.err('Run "nestjs-payouts simulate --help" for the options.');
    return EXIT_USAGE;
  }

  output = redactedOutput(output, secretRedactor(parsed));
  const attempts = parsed.attempts ?? DEFAULT_DELIVERY_ATTEMPTS;
  const intervalMs = parsed.intervalMs ?? DEFAULT_DELIVERY_INTERVAL_MS;
  output.out(describeStart(parsed.eventType, parsed.url, attempts, intervalMs));
  try {
    const report = await deliver(parsed.url, paymentMethodNotification(parsed.eventType, parsed.overrides), {
      attempts,
      intervalMs,
      timeoutMs: parsed.timeoutMs,
      headers: parsed.headers,
      onAttempt: (attempt: DeliveryAttempt) => {
        output.out(describeAttempt(attempt));
        // Re-sending to a host that refused the first connection only delays the obvious answer.
        if (attempt.attempt === 1 && attempt.error?.kind === 'unreachable') {
          throw new HostUnreachable(attempt.error.message);
        }
        if (!attempt.acknowledged && attempt.attempt < attempts) {
          output.out(`Next attempt in ${describeDuration(intervalMs)}.`);
        }
      },
    });
    output.out(describeOutcome(report));
    return report.delivered ? EXIT_DELIVERED : EXIT_NOT_DELIVERED;
  } catch (error) {
    if (!(error instanceof HostUnreachable)) throw error;
    output.err(
      `Error: ${error.message} at ${displayUrl(parsed.url)}. Is the application running, and are the host and port right?`,
    );
    return EXIT_USAGE;
  }
}

function redactedOutput(output: CommandOutput, redact: (line: string) => string): CommandOutput {
  return { out: (line) => output.out(redact(line)), err: (line) => output.err(redact(line)) };
}
