import { UnrecoverableError } from 'bullmq';
import { stackOf } from '../common/error-stack.js';
import { printable } from '../common/printable.js';
import {
  attemptOf,
  hasSucceeded,
  nextHandlerRecord,
  readHandlerRecord,
} from '../common/notification-handler-record.js';
import {
  type NotificationContext,
  type NotificationDispatcherHost,
  type NotificationHandlerRecord,
  NotificationHandlersError,
  type NotificationHandlerRef,
  type NotificationTrace,
} from '../index.js';
import { type NotificationJobData, readNotificationJobData } from './notification-job.js';
import type { PackageLogger } from '../common/package-logger.js';

/** What a completed job keeps as its return value. */
export type NotificationJobResult = 'handled' | 'unhandled';

/** The part of a BullMQ job that the processor reads, and the one write it makes. */
export interface ProcessedJob {
  readonly id?: string;
  readonly data: unknown;
  readonly attemptsMade: number;
  readonly opts: { readonly attempts?: number };
  updateData(data: unknown): Promise<void>;
}

/**
 * Runs a stored notification's handlers on a worker, as the route would: re-validated by the route's own rules into
 * the classes handlers receive, every handler to completion even when another fails. A failure fails the attempt
 * (the queue retries it); job data that no longer validates fails at once, since no retry can fix it. The job's
 * record of its handlers keeps a retry from running again those that succeeded.
 */
export function createNotificationProcessor(
  host: NotificationDispatcherHost,
  logger: PackageLogger,
): (job: ProcessedJob) => Promise<NotificationJobResult> {
  return async (job) => {
    const data = readNotificationJobData(job.data);
    if (!data) {
      throw new UnrecoverableError(`Job ${job.id} holds no notification this version can read; not retried`);
    }
    // The route's trace goes on here: the worker's handling is a part of the notification's one trace.
    const trace = host.resumeTrace(data.trace ?? {});
    try {
      const result = await processJob(job, data, host, logger, trace);
      trace.end('acknowledged');
      return result;
    } catch (error) {
      trace.end(error instanceof UnrecoverableError ? 'invalid' : 'failed');
      throw error;
    }
  };
}

async function processJob(
  job: ProcessedJob,
  data: NotificationJobData,
  host: NotificationDispatcherHost,
  logger: PackageLogger,
  trace: NotificationTrace,
): Promise<NotificationJobResult> {
  const parsed = host.parse(data.notification);
  if (parsed.errors) {
    const fields = parsed.errors.map(({ field, message }) => `${field} ${message}`).join('; ');
    throw new UnrecoverableError(`The stored notification no longer validates (${fields}); not retried`);
  }
  const { notification } = parsed;
  trace.validated(notification.eventType);
  const handlers = host.handlersFor(notification.eventType);
  if (handlers.length === 0) {
    logger.warn(`No handler for ${printable(notification.eventType)} notification ${data.dedupeKey}; completed`);
    return 'unhandled';
  }
  const attempt = job.attemptsMade + 1;
  const context: NotificationContext = {
    rawBody: undefined,
    headers: {},
    receivedAt: new Date(data.receivedAt),
    dedupeKey: data.dedupeKey,
    account: host.account,
    ip: data.ip,
    source: 'queue',
    attempt,
  };
  // A job of an earlier version, or whose handlers have all failed so far, has no record: every handler runs, each
  // at the job's attempt (they all ran on every attempt before).
  const record = data.handlers === undefined ? undefined : readHandlerRecord(data.handlers);
  const remaining = record ? handlers.filter((handler) => !hasSucceeded(record, handler.id)) : handlers;
  if (record && trace.handlerSkipped) {
    for (const handler of handlers) if (!remaining.includes(handler)) trace.handlerSkipped(handler.name);
  }
  const recorder = new JobHandlerRecorder(job, record, remaining.length, logger, data.dedupeKey);
  const outcomes = await Promise.allSettled(
    remaining.map((handler) => {
      // Counted within the job's current set of attempts: a replay from the failed set starts again at 1.
      const own = record ? Math.min(attemptOf(record, handler.id), attempt) : attempt;
      const handlerContext = own === attempt ? context : { ...context, attempt: own };
      return trace
        .runHandler(handler.name, () => run(handler, notification, handlerContext))
        .then(() => recorder.succeeded(handler.id));
    }),
  );
  const failed: { handler: NotificationHandlerRef; error: unknown }[] = [];
  outcomes.forEach((outcome, index) => {
    if (outcome.status === 'rejected') failed.push({ handler: remaining[index]!, error: outcome.reason });
  });
  if (failed.length === 0) {
    await recorder.written();
    return 'handled';
  }
  recorder.failed(failed.map(({ handler }) => handler.id));
  await recorder.written();
  const of = job.opts.attempts ?? 1;
  for (const { handler, error } of failed) {
    // A warning: the one error is logged when the last attempt has failed.
    logger.warn(
      `${handler.name} failed on notification ${data.dedupeKey} (attempt ${attempt} of ${of}): ` + stackOf(error),
    );
  }
  throw new NotificationHandlersError(
    data.dedupeKey,
    failed.map(({ handler }) => handler.name),
    failed.map(({ error }) => (error instanceof Error ? error.message : String(error))),
  );
}

/**
 * Keeps the job's record of its handlers up to date, one write at a time, newest last: after each handler that
 * succeeds while others still run (a worker killed then does not lose it), and once an attempt has failed. A job
 * whose handlers all succeed in one attempt is never written: it completes.
 */
class JobHandlerRecorder {
  readonly #succeeded: string[] = [];
  #running: number;
  #writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly job: ProcessedJob,
    private readonly record: NotificationHandlerRecord | undefined,
    running: number,
    private readonly logger: PackageLogger,
    private readonly dedupeKey: string,
  ) {
    this.#running = running;
  }

  succeeded(id: string): void {
    this.#succeeded.push(id);
    this.#running -= 1;
    if (this.#running > 0) this.#write(nextHandlerRecord(this.record, this.#succeeded, []));
  }

  failed(ids: readonly string[]): void {
    this.#write(nextHandlerRecord(this.record, this.#succeeded, ids));
  }

  /** Resolves once every write has been made or has failed (a failed write is logged, never thrown). */
  written(): Promise<void> {
    return this.#writes;
  }

  #write(record: NotificationHandlerRecord): void {
    // The job's data as stored, whatever its other fields, with the record added or replaced.
    const data = { ...(this.job.data as object), handlers: record };
    this.#writes = this.#writes
      .then(() => this.job.updateData(data))
      .catch((error: unknown) => {
        this.logger.warn(
          `Could not record the handlers that succeeded on notification ${this.dedupeKey}; a retry may run them ` +
            `again: ${stackOf(error)}`,
        );
      });
  }
}

/** A handler that throws synchronously fails like one that rejects. */
async function run(
  handler: NotificationHandlerRef,
  notification: Parameters<NotificationHandlerRef['invoke']>[0],
  context: NotificationContext,
): Promise<unknown> {
  return handler.invoke(notification, context);
}
