import { type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { pingQueue, queueFigures, workerState } from '../common/bullmq-queue-health.js';
import { type JobsOptions, Queue, Worker } from 'bullmq';
import { closeBullmq, startupCheckSettled } from '../common/close-bullmq.js';
import { withDeadline } from '../common/with-deadline.js';
import {
  type DispatchedNotification,
  type NotificationContext,
  type NotificationDispatcher,
  type NotificationDispatcherHost,
  type NotificationDispatchOutcome,
  NotificationEnqueueError,
  type NotificationTrace,
  type PayoutsHealthSource,
} from '../index.js';
import {
  NOTIFICATION_JOB_NAME,
  notificationJobData,
  notificationJobId,
  readNotificationJobData,
} from './notification-job.js';
import { ADD_TIMED_OUT, NotificationAddBatch } from './notification-add-batch.js';
import { createNotificationProcessor, type NotificationJobResult } from './notification-processor.js';
import type { PayoutsQueueConfig } from './payouts-queue-options.js';
import { RunningJobs } from './running-jobs.js';
import { throttledErrorLog } from '../common/throttled-error-log.js';
import { PackageLogger } from '../common/package-logger.js';

/** How long closing the producer waits for Redis, which may be away. */
const QUEUE_CLOSE_TIMEOUT_MS = 5000;
/**
 * How long the worker's connections may take to close once its handlers are done: Redis answers a close within
 * milliseconds, so a longer wait means Redis is away, and the connections are dropped instead.
 */
const WORKER_CLOSE_TIMEOUT_MS = 1000;

/**
 * Queue mode: the route stores each notification as a BullMQ job, and answers once Redis has it; workers run the
 * handlers, retry failures with backoff, and leave what keeps failing in the failed set. Nest runs its hooks: the
 * worker starts at bootstrap, and on shutdown it stops taking jobs and finishes the running ones, then the producer
 * closes after the HTTP server, so that the adds of requests still in flight complete.
 */
export class QueueNotificationDispatcher
  implements NotificationDispatcher, OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown
{
  private readonly logger = new PackageLogger('PayoutsQueue');
  /** The producer, also what the registration exports for dashboards and the dead-letter functions. */
  readonly queue: Queue;
  private worker: Worker | undefined;
  private readonly running = new RunningJobs();
  /** What health checks ask: a `PING` on the producer's connection, and the queue's figures. */
  readonly health: PayoutsHealthSource = {
    component: 'notifications-queue',
    ping: () => pingQueue(this.queue),
    figures: () => queueFigures(this.queue, this.worker),
    worker: () => workerState(this.worker),
  };
  /** The adds of the notifications of one turn of the event loop, sent together. */
  private readonly adds: NotificationAddBatch;
  /**
   * Every job's options but its id, built once: BullMQ copies them into each job it creates and changes none of them,
   * and freezing them keeps it so.
   */
  private readonly jobOptions: Readonly<JobsOptions>;

  constructor(
    private readonly host: NotificationDispatcherHost,
    private readonly config: PayoutsQueueConfig,
    readonly queueName: string,
  ) {
    this.queue = new Queue(queueName, { connection: config.connection, prefix: config.prefix });
    this.queue.on('error', throttledErrorLog(this.logger, `Queue ${queueName}`));
    this.adds = new NotificationAddBatch(this.queue, config.enqueueTimeoutMs);
    this.jobOptions = Object.freeze({
      attempts: config.attempts,
      backoff: Object.freeze({ type: 'exponential', delay: config.backoffMs }),
      // Kept for the retention, never removed on completion: the kept job is what recognises a re-send.
      removeOnComplete: Object.freeze({ age: Math.ceil(config.retentionMs / 1000) }),
      // The failed set is the dead-letter list: kept until replayed or removed.
      removeOnFail: false,
    });
  }

  dispatch(
    notification: DispatchedNotification,
    context: NotificationContext,
    trace: NotificationTrace,
  ): Promise<NotificationDispatchOutcome> {
    const { dedupeKey } = context;
    const added = this.adds.add({
      name: NOTIFICATION_JOB_NAME,
      data: notificationJobData(notification, context, trace.carrier()),
      // A second add of this id, from a re-send or another instance, leaves the job as it is.
      opts: { ...this.jobOptions, jobId: notificationJobId(dedupeKey) },
    });
    return added.then((outcome: unknown): NotificationDispatchOutcome => {
      if (outcome === undefined) return 'enqueued';
      if (outcome !== ADD_TIMED_OUT) return this.enqueueFailed(dedupeKey, outcome);
      const { enqueueTimeoutMs } = this.config;
      return this.enqueueFailed(
        dedupeKey,
        new NotificationEnqueueError(dedupeKey, 'timeout', `no reply from Redis within ${enqueueTimeoutMs} ms`),
      );
    });
  }

  private enqueueFailed(dedupeKey: string, error: unknown): 'failed' {
    const failure =
      error instanceof NotificationEnqueueError
        ? error
        : new NotificationEnqueueError(dedupeKey, 'error', messageOf(error), { cause: error });
    this.logger.error(`${failure.message} Not acknowledged, so the service sends it again.`, error);
    return 'failed';
  }

  /** Starts taking jobs once every module is initialised, the handlers discovered. */
  onApplicationBootstrap(): void {
    if (!this.config.worker) return;
    const { connection, prefix, concurrency, lockDurationMs } = this.config;
    const processor = createNotificationProcessor(this.host, this.logger);
    const worker = new Worker<unknown, NotificationJobResult>(
      this.queueName,
      (job) => this.running.track(() => processor(job)),
      // A stalled job (its worker died) is looked for as often as a lock lasts.
      { connection, prefix, concurrency, lockDuration: lockDurationMs, stalledInterval: lockDurationMs },
    );
    worker.on('error', throttledErrorLog(this.logger, `Worker of queue ${this.queueName}`));
    worker.on('failed', (job, error) => {
      if (job) this.reportFailure(job, error);
    });
    worker.on('stalled', (jobId) => {
      this.logger.warn(`Job ${jobId} of queue ${this.queueName} stalled (its worker stopped mid-run); it runs again`);
    });
    this.worker = worker;
  }

  /**
   * Stops taking jobs and waits for the running ones, up to `shutdownTimeoutMs`; then for the worker's connections to
   * close, briefly, since only Redis can hold them up, and past that drops them.
   */
  async onModuleDestroy(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    const { shutdownTimeoutMs } = this.config;
    await startupCheckSettled(worker);
    const closed = worker.close().then(
      () => true,
      () => true,
    );
    const timeout = () => new Error('timeout');
    const idle = await withDeadline(this.running.idle(), shutdownTimeoutMs, timeout).then(
      () => true,
      () => false,
    );
    if (!idle) {
      this.logger.warn(
        `Handlers still running after shutdownTimeoutMs (${shutdownTimeoutMs} ms) are left to stop with the process; ` +
          `their jobs run again on another worker once their locks expire`,
      );
      return;
    }
    if (await withDeadline(closed, WORKER_CLOSE_TIMEOUT_MS, timeout).catch(() => false)) return;
    this.logger.warn(
      `The worker of queue ${this.queueName} stopped with no handler running, but Redis did not answer while it ` +
        'closed its connections: they are dropped',
    );
    await withDeadline(worker.disconnect(), WORKER_CLOSE_TIMEOUT_MS, timeout).catch(() => undefined);
  }

  /** After the HTTP server has closed, so the adds of the last requests complete first. */
  async onApplicationShutdown(): Promise<void> {
    await closeBullmq(this.queue, { timeoutMs: QUEUE_CLOSE_TIMEOUT_MS });
  }

  /** One error when a notification has failed for good; a warning for an attempt that is retried. */
  private reportFailure(
    job: { id?: string; data: unknown; attemptsMade: number; opts: { attempts?: number }; finishedOn?: number | null },
    error: Error,
  ): void {
    const key = readNotificationJobData(job.data)?.dedupeKey ?? `in job ${job.id}`;
    const attempts = job.opts.attempts ?? 1;
    const final =
      error.name === 'UnrecoverableError' || job.attemptsMade >= attempts || typeof job.finishedOn === 'number';
    if (!final) {
      this.logger.warn(`Notification ${key} failed attempt ${job.attemptsMade} of ${attempts}; it is retried`);
      return;
    }
    this.logger.error(
      `Notification ${key} failed for good after ${job.attemptsMade} attempt${job.attemptsMade === 1 ? '' : 's'}: ` +
        `${error.message}. Job ${job.id} stays in the failed set of queue ${this.queueName}; replay it with ` +
        '`nestjs-payouts queue replay` or replayFailedNotification() once the cause is fixed.',
    );
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
