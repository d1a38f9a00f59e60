import type { LoggerService } from '@nestjs/common';
import { UnrecoverableError } from 'bullmq';
import { stackOf } from '../common/error-stack.js';
import {
  type NotificationContext,
  type NotificationDispatcherHost,
  NotificationHandlersError,
  type NotificationHandlerRef,
  type NotificationTrace,
} from '../index.js';
import { type NotificationJobData, readNotificationJobData } from './notification-job.js';

/** What a completed job keeps as its return value. */
export type NotificationJobResult = 'handled' | 'unhandled';

/** The part of a BullMQ job that the processor reads. */
export interface ProcessedJob {
  readonly id?: string;
  readonly data: unknown;
  readonly attemptsMade: number;
  readonly opts: { readonly attempts?: number };
}

/**
 * Runs a stored notification's handlers on a worker, as the route would: re-validated by the route's own rules into
 * the classes handlers receive, every handler to completion even when another fails. A failure fails the attempt
 * (the queue retries it); job data that no longer validates fails at once, since no retry can fix it.
 */
export function createNotificationProcessor(
  host: NotificationDispatcherHost,
  logger: LoggerService,
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
  logger: LoggerService,
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
    logger.warn(`No handler for ${notification.eventType} notification ${data.dedupeKey}; completed`);
    return 'unhandled';
  }
  const context: NotificationContext = {
    rawBody: undefined,
    headers: {},
    receivedAt: new Date(data.receivedAt),
    dedupeKey: data.dedupeKey,
    account: host.account,
    ip: data.ip,
    source: 'queue',
    attempt: job.attemptsMade + 1,
  };
  const outcomes = await Promise.allSettled(
    handlers.map((handler) => trace.runHandler(handler.name, () => run(handler, notification, context))),
  );
  const failed: { handler: NotificationHandlerRef; error: unknown }[] = [];
  outcomes.forEach((outcome, index) => {
    if (outcome.status === 'rejected') failed.push({ handler: handlers[index]!, error: outcome.reason });
  });
  if (failed.length === 0) return 'handled';
  const of = job.opts.attempts ?? 1;
  for (const { handler, error } of failed) {
    // A warning: the one error is logged when the last attempt has failed.
    logger.warn(
      `${handler.name} failed on notification ${data.dedupeKey} (attempt ${context.attempt} of ${of}): ` +
        stackOf(error),
    );
  }
  throw new NotificationHandlersError(
    data.dedupeKey,
    failed.map(({ handler }) => handler.name),
    failed.map(({ error }) => (error instanceof Error ? error.message : String(error))),
  );
}

/** A handler that throws synchronously fails like one that rejects. */
async function run(
  handler: NotificationHandlerRef,
  notification: Parameters<NotificationHandlerRef['invoke']>[0],
  context: NotificationContext,
): Promise<unknown> {
  return handler.invoke(notification, context);
}
