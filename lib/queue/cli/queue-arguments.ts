import { InvalidArgument, readCommandLine } from '../../common/command-line.js';
import {
  checkedAsArguments,
  redisUrlArgument,
  timerDelayArgument,
  wholeNumberArgument,
} from '../../common/command-line-values.js';
import type { RedisUrlConnection } from '../../common/redis-url-connection.js';
import { resolvePayoutsAccount } from '../../config/payouts-account.js';
import { notificationsQueueName } from '../notifications-queue-name.js';
import { resolvePayoutsQueueOptions } from '../payouts-queue-options.js';

export const QUEUE_USAGE = `Usage: nestjs-payouts queue <failed|replay> [options]

Shows and replays the notifications that queue mode could not handle: those whose handlers failed on
every attempt stay in the queue's failed set until replayed.

Commands:
  failed                  List the failed notifications, newest first
  replay --job <id>       Run one failed notification again, with a fresh set of attempts
  replay --all            Run every failed notification again

Options:
  --redis-url <url>       redis://[user:password@]host:port[/db], or rediss:// for TLS
                          (default: the REDIS_URL environment variable, which keeps a password
                          out of the process list)
  --account <name>        The registration's name, whose queue is payouts-notifications-<name>
                          (default: the unnamed registration's, payouts-notifications)
  --queue <name>          The queue's name, when payoutsQueue() was given a queueName
  --prefix <prefix>       BullMQ's key prefix, when payoutsQueue() was given one (default: bull)
  --limit <n>             failed: how many to list at most (default: 100)
  --timeout-ms <n>        How long to wait for Redis (default: 5000)
  -h, --help              Show this help

Exit status: 0 on success, 1 when the job to replay is not in the failed set,
2 for invalid options or when Redis cannot be reached.`;

export interface QueueInvocation {
  readonly action: 'failed' | 'replay';
  readonly connection: RedisUrlConnection;
  readonly queueName: string;
  readonly prefix: string | undefined;
  /** `replay`: one job, or `'all'`. */
  readonly job: string | 'all' | undefined;
  readonly limit: number;
  readonly timeoutMs: number;
}

/** The parsed command line, or `'help'`; a bad one throws `InvalidArgument`. */
export function parseQueueArguments(args: string[], env: NodeJS.ProcessEnv): QueueInvocation | 'help' {
  const commandLine = readCommandLine(args, {
    actions: ['failed', 'replay'],
    urlOption: '--redis-url',
    options: {
      'redis-url': { type: 'string' },
      account: { type: 'string' },
      queue: { type: 'string' },
      prefix: { type: 'string' },
      job: { type: 'string' },
      all: { type: 'boolean' },
      limit: { type: 'string' },
      'timeout-ms': { type: 'string' },
    },
  });
  if (commandLine === 'help') return 'help';
  const { values, action } = commandLine;
  if (values.account !== undefined && values.queue !== undefined) {
    throw new InvalidArgument('--account and --queue name the same thing: give one of them');
  }
  const { queue: queueName, prefix } = values;
  // The names the module accepts, in its own words: a name that it would refuse names no queue of it.
  checkedAsArguments(() => resolvePayoutsAccount(values.account), { name: '--account' });
  checkedAsArguments(() => resolvePayoutsQueueOptions({ connection: {}, queueName, prefix }), {
    queueName: '--queue',
    prefix: '--prefix',
  });
  return {
    action,
    connection: redisUrlArgument(values['redis-url'], env),
    queueName: queueName ?? notificationsQueueName(values.account),
    prefix,
    job: action === 'replay' ? parseJob(values.job, values.all) : undefined,
    limit: wholeNumberArgument('--limit', values.limit, 100),
    timeoutMs: timerDelayArgument('--timeout-ms', values['timeout-ms'], 5000, 1),
  };
}

function parseJob(job: string | undefined, all: boolean | undefined): string | 'all' {
  if ((job === undefined) === !all) throw new InvalidArgument('replay takes either --job <id> or --all');
  return job ?? 'all';
}
