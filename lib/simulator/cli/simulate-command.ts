import { type CommandOutput, EXIT_USAGE, hiddenIn } from '../../common/command-output.js';
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

/** Raised from `onAttempt` to stop at once when the first attempt finds nothing listening. */
class HostUnreachable extends Error {}

/**
 * Runs `nestjs-payouts simulate …` and resolves with the process exit status; a bad command line throws
 * `InvalidArgument`.
 */
export async function runSimulateCommand(args: string[], output: CommandOutput): Promise<number> {
  const parsed = await parseSimulateArguments(args);
  if (parsed === 'help') {
    output.out(SIMULATE_USAGE);
    return EXIT_DELIVERED;
  }

  output = hiddenIn(output, secretRedactor(parsed));
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
