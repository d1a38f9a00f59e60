import { Queue } from 'bullmq';
import { type CommandOutput, EXIT_USAGE, hiddenIn } from '../../common/command-output.js';
import { escapeControls, printable } from '../../common/printable.js';
import { closeBullmq } from '../../common/close-bullmq.js';
import { withDeadline } from '../../common/with-deadline.js';
import { missingBullMqPeer } from '../../common/bullmq-peers.js';
import {
  type FailedNotification,
  listFailedNotifications,
  replayFailedNotification,
  replayFailedNotifications,
} from '../dead-letters.js';
import { parseQueueArguments, QUEUE_USAGE, type QueueInvocation } from './queue-arguments.js';
import { connectionSecretsHidden, describeConnection } from '../../common/redis-url-connection.js';

export const EXIT_OK = 0;
export const EXIT_NOT_REPLAYED = 1;

/** Failed reasons are shown up to this length, on one line. */
const SHOWN_REASON_CHARS = 200;

class RedisUnreachable extends Error {}

/** Runs `nestjs-payouts queue …` and resolves with the process exit status; a bad command line throws `InvalidArgument`. */
export async function runQueueCommand(args: string[], output: CommandOutput, env: NodeJS.ProcessEnv): Promise<number> {
  const parsed = parseQueueArguments(args, env);
  if (parsed === 'help') {
    output.out(QUEUE_USAGE);
    return EXIT_OK;
  }
  // The command connects from a URL, so BullMQ opens its own connections, with ioredis.
  const missing = missingBullMqPeer(true);
  if (missing !== undefined) {
    output.err(`Error: the queue command needs the ${missing} package: npm install ${missing}`);
    return EXIT_USAGE;
  }
  // The URL's credentials never reach the output, whatever an error message echoes.
  output = hiddenIn(output, connectionSecretsHidden(parsed.connection));
  const where = `queue ${printable(parsed.queueName)} at ${describeConnection(parsed.connection)}`;
  const queue = new Queue(parsed.queueName, {
    // One connection attempt: a command that cannot reach Redis says so and ends, rather than retrying for ever.
    connection: { ...parsed.connection, connectTimeout: parsed.timeoutMs, retryStrategy: () => null },
    prefix: parsed.prefix,
  });
  const errors: Error[] = [];
  queue.on('error', (error) => errors.push(error));
  try {
    const run =
      parsed.action === 'failed' ? listFailed(queue, parsed, where, output) : replay(queue, parsed, where, output);
    return await withDeadline(run, parsed.timeoutMs, () => new RedisUnreachable(errors[0]?.message ?? 'no reply'));
  } catch (error) {
    const reason = error instanceof RedisUnreachable ? error.message : (errors[0]?.message ?? String(error));
    output.err(`Error: cannot reach Redis for ${where} (${escapeControls(reason)}).`);
    return EXIT_USAGE;
  } finally {
    await closeBullmq(queue);
  }
}

async function listFailed(
  queue: Queue,
  invocation: QueueInvocation,
  where: string,
  output: CommandOutput,
): Promise<number> {
  const [total, failed] = await Promise.all([
    queue.getFailedCount(),
    listFailedNotifications(queue, { limit: invocation.limit }),
  ]);
  output.out(
    `${total} failed notification${total === 1 ? '' : 's'} in ${where}${total > failed.length ? `, the newest ${failed.length} shown` : ''}`,
  );
  for (const notification of failed) output.out(describeFailed(notification));
  return EXIT_OK;
}

async function replay(
  queue: Queue,
  invocation: QueueInvocation,
  where: string,
  output: CommandOutput,
): Promise<number> {
  if (invocation.job === 'all') {
    const count = await replayFailedNotifications(queue);
    output.out(`Replayed ${count} failed notification${count === 1 ? '' : 's'} of ${where}`);
    return EXIT_OK;
  }
  const outcome = await replayFailedNotification(queue, invocation.job!);
  if (outcome === 'replayed') {
    output.out(`Replayed job ${escapeControls(invocation.job!)} of ${where}`);
    return EXIT_OK;
  }
  const why = outcome === 'not-found' ? 'there is no such job' : 'it is not in the failed set';
  output.err(`Error: job ${escapeControls(invocation.job!)} of ${where} was not replayed: ${why}.`);
  return EXIT_NOT_REPLAYED;
}

function describeFailed({
  jobId,
  dedupeKey,
  eventType,
  attemptsMade,
  failedAt,
  failedReason,
}: FailedNotification): string {
  // Everything but the counts comes from job data, which a notification's sender or a handler's error wrote.
  return [
    escapeControls(jobId),
    escapeControls(eventType),
    dedupeKey === undefined ? '(unreadable job data)' : escapeControls(dedupeKey),
    `${attemptsMade} attempt${attemptsMade === 1 ? '' : 's'}`,
    `failed ${failedAt?.toISOString() ?? 'at an unknown time'}`,
    escapeControls(failedReason, SHOWN_REASON_CHARS),
  ].join('  ');
}
