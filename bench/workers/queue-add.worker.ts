import { Queue } from 'bullmq';
import { hash } from 'node:crypto';
import { runChild } from '../child-main.js';
import { notificationBody } from '../notification-sample.js';
import { argValue } from '../command-line.js';

/**
 * 4a. BullMQ's `Queue.add` alone, with a job shaped like the one queue mode's route adds for each notification: the
 * same name, data (the notification's JSON text, its dedupe key, receipt time and sender's address), options and a
 * hashed job id, so that the route's figure in queue mode can be split into BullMQ's share and the rest.
 */
export interface QueueAddArgs {
  readonly adds: number;
  /** Adds awaiting their reply at any time: 1 sends each alone, 50 matches the route phase's connections. */
  readonly inFlight: number;
}

export interface QueueAddResult {
  readonly addsPerSecond: number;
  /** CPU time of this process (user + system) per add. */
  readonly cpuMicrosPerAdd: number;
}

const redisUrl = new URL(argValue('redis-url')!);
/** The route's job options with the defaults of `payoutsQueue()`. */
const JOB_OPTIONS = Object.freeze({
  attempts: 5,
  backoff: Object.freeze({ type: 'exponential', delay: 10_000 }),
  removeOnComplete: Object.freeze({ age: 86_400 }),
  removeOnFail: false,
});
/** Numbers unseen by other runs, so that no add finds its job id already there. */
let sequence = 0;

function addNext(queue: Queue): Promise<unknown> {
  const number = sequence++;
  const dedupeKey = `PAYMENT_METHOD_ADDED:pmt_${number.toString().padStart(12, '0')}:2025-03-14T09:26:53.589Z`;
  const data = {
    notification: notificationBody(number),
    dedupeKey,
    receivedAt: new Date().toISOString(),
    ip: '127.0.0.1',
  };
  return queue.add('notification', data, { ...JOB_OPTIONS, jobId: `notification-${hash('sha256', dedupeKey, 'hex')}` });
}

await runChild(async () => {
  const queue = new Queue('bench-queue-add', { connection: { host: redisUrl.hostname, port: Number(redisUrl.port) } });
  await queue.waitUntilReady();
  return {
    commands: {
      run: async (args: unknown): Promise<QueueAddResult> => {
        const { adds, inFlight } = args as QueueAddArgs;
        let started = 0;
        const lane = async () => {
          while (started < adds) {
            started++;
            await addNext(queue);
          }
        };
        const cpuBefore = process.cpuUsage();
        const startedAt = performance.now();
        await Promise.all(Array.from({ length: inFlight }, lane));
        const seconds = (performance.now() - startedAt) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        return { addsPerSecond: adds / seconds, cpuMicrosPerAdd: (cpu.user + cpu.system) / adds };
      },
      // The jobs of a run are removed before the next, so that Redis does not grow from round to round.
      clear: () => queue.obliterate({ force: true }),
    },
    close: () => queue.close(),
  };
});
