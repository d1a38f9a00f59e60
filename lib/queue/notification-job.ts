import { hash } from 'node:crypto';
import type { NotificationContext, NotificationHandlerRecord, NotificationTraceCarrier } from '../index.js';
import { jsonText } from './json-text.js';

/**
 * A job's data as a worker reads it back: the validated notification, as the service sent it, and what the handlers'
 * context needs. Never the request's headers, query string or raw body, which may carry the notification secret.
 */
export interface NotificationJobData {
  readonly notification: Readonly<Record<string, unknown>>;
  readonly dedupeKey: string;
  /** ISO 8601. */
  readonly receivedAt: string;
  readonly ip?: string;
  /** The route's trace context (`traceparent`, `tracestate`), so that the worker continues the same trace. */
  readonly trace?: NotificationTraceCarrier;
  /**
   * Which handlers have succeeded, and how many runs of the others failed: written by the worker as each handler
   * succeeds (while others still run) and when an attempt fails, so that a retry, or another worker after a crash,
   * runs only the others. Absent until then, and in jobs stored by earlier versions.
   */
  readonly handlers?: NotificationHandlerRecord;
}

/**
 * What a job holds in Redis: the notification as its JSON text. BullMQ stores `JSON.stringify()` of the data, which
 * recurses once per level of nesting, and a verified notification may nest an unknown field ten thousand levels deep;
 * a string is stored as it is, whatever it holds.
 */
export interface StoredNotificationJobData extends Omit<NotificationJobData, 'notification'> {
  readonly notification: string;
}

/**
 * The name of every job: fixed and short, since BullMQ writes it into the job and into its events stream; the event
 * type is in the notification. Jobs of earlier releases are named after their event type, and read the same.
 */
export const NOTIFICATION_JOB_NAME = 'notification';

/**
 * The job id of a notification: one per dedupe key, so concurrent deliveries and re-sends, on any instance, find
 * the job already there and add nothing. BullMQ refuses `:` and integer-like ids, and the key holds both `:` and
 * anything the service puts in its ids, hence a hash; the prefix says what the id is in a dashboard. The one-shot
 * `hash()` writes the same SHA-256 as a `Hash` object, for half its cost.
 */
export function notificationJobId(dedupeKey: string): string {
  return `notification-${hash('sha256', dedupeKey, 'hex')}`;
}

/** The notification's own fields, unknown ones included, as JSON text, and the context its handlers need. */
export function notificationJobData(
  notification: Readonly<Record<string, unknown>>,
  context: NotificationContext,
  trace: NotificationTraceCarrier,
): StoredNotificationJobData {
  return {
    notification: jsonText(notification),
    dedupeKey: context.dedupeKey,
    receivedAt: context.receivedAt.toISOString(),
    ...(context.ip !== undefined && { ip: context.ip }),
    ...(Object.keys(trace).length > 0 && { trace }),
  };
}

/**
 * Job data as a worker reads it back, the notification parsed from its JSON text (or, in a job of an earlier
 * release, as it was stored): `undefined` when a field is missing or of another type.
 */
export function readNotificationJobData(data: unknown): NotificationJobData | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const { notification: stored, dedupeKey, receivedAt, ip, trace } = data as Record<string, unknown>;
  const notification = typeof stored === 'string' ? parsedObject(stored) : stored;
  if (notification === null || typeof notification !== 'object' || typeof dedupeKey !== 'string') return undefined;
  if (typeof receivedAt !== 'string' || Number.isNaN(Date.parse(receivedAt))) return undefined;
  if (ip !== undefined && typeof ip !== 'string') return undefined;
  if (trace !== undefined && !isStringRecord(trace)) return undefined;
  return { ...(data as NotificationJobData), notification: notification as Readonly<Record<string, unknown>> };
}

/** The event type of a stored notification, else the job's name (an earlier release's jobs are named after it). */
export function notificationJobEventType(job: { readonly name: string; readonly data: unknown }): string {
  const eventType = readNotificationJobData(job.data)?.notification.eventType;
  return typeof eventType === 'string' ? eventType : job.name;
}

function parsedObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    value !== null && typeof value === 'object' && Object.values(value).every((entry) => typeof entry === 'string')
  );
}
