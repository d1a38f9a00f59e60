import { findAcknowledgementFailure } from './acknowledgement.js';
import { type DeliveryClock, systemClock } from './delivery-clock.js';
import { type NoReplyError, postNotification } from './post-notification.js';
import { RawNotification } from './raw-notification.js';
import { parseHttpUrl } from '../common/http-url.js';
import { isTimerDelay, timerDelayExpected } from '../common/timer-delay.js';
import { isWholeNumber } from '../common/whole-number.js';

/** The spec's policy: the first send and 3 re-sends, 5 minutes apart. */
export const DEFAULT_DELIVERY_ATTEMPTS = 4;
export const DEFAULT_DELIVERY_INTERVAL_MS = 5 * 60 * 1000;
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

export interface DeliveryOptions {
  /** Attempts in all, the first one included. Default `4`. */
  attempts?: number;
  /** Wait between two attempts. Default `300000` (5 minutes); tests pass a few milliseconds or a `clock`. */
  intervalMs?: number;
  /** How long one attempt waits for the complete reply. Default `10000`. */
  timeoutMs?: number;
  /** Extra request headers, for example one that carries the notification secret. */
  headers?: Record<string, string>;
  /** Reads the time of each attempt and waits between attempts. Default: the real clock. */
  clock?: DeliveryClock;
  /** Called after every attempt, before any wait; an exception it throws stops the delivery and is rethrown. */
  onAttempt?: (attempt: DeliveryAttempt) => void;
}

export interface DeliveryAttempt {
  /** `1` for the first send. */
  attempt: number;
  /** When the attempt started, by the delivery's clock. */
  at: Date;
  /** Whether the reply acknowledged the notification. */
  acknowledged: boolean;
  /** The reply's status; absent when nothing replied. */
  status?: number;
  /** The reply's body as text (its first 64 KiB); absent when nothing replied. */
  body?: string;
  /** Why nothing replied; absent when a reply arrived. */
  error?: NoReplyError;
  /** Why the attempt did not acknowledge the notification, in words; absent when it did. */
  failure?: string;
}

export interface DeliveryReport {
  /** Whether an attempt was acknowledged; no attempt follows an acknowledged one. */
  delivered: boolean;
  attempts: DeliveryAttempt[];
  /** The service e-mails the merchant's technical contact when every attempt failed. */
  alertedTechnicalContact: boolean;
}

/**
 * Delivers a notification the way the payouts service does: POSTs it as JSON and, until a reply is
 * status 200 with `{"ResultCode":0}`, sends it again after `intervalMs`, `attempts` times in all.
 * Every attempt carries the same bytes. Resolves with every attempt; rejects only for invalid arguments.
 */
export async function deliver(
  url: string | URL,
  notification: object | RawNotification,
  options: DeliveryOptions = {},
): Promise<DeliveryReport> {
  const target = parseTargetUrl(url);
  const attempts = wholeNumber('attempts', options.attempts, DEFAULT_DELIVERY_ATTEMPTS, 1);
  const intervalMs = timerDelay('intervalMs', options.intervalMs, DEFAULT_DELIVERY_INTERVAL_MS, 0);
  const timeoutMs = timerDelay('timeoutMs', options.timeoutMs, DEFAULT_DELIVERY_TIMEOUT_MS, 1);
  const clock = options.clock ?? systemClock;
  const request = {
    body: serialize(notification),
    headers: {
      'content-type': notification instanceof RawNotification ? notification.contentType : 'application/json',
      'user-agent': 'nestjs-payouts-simulator',
      ...options.headers,
    },
    timeoutMs,
  };

  const made: DeliveryAttempt[] = [];
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) {
      await clock.sleep(intervalMs);
    }
    const at = clock.now();
    const outcome = await postNotification(target, request);
    const record: DeliveryAttempt =
      'error' in outcome
        ? { attempt, at, acknowledged: false, error: outcome.error, failure: outcome.error.message }
        : withVerdict(attempt, at, outcome.status, outcome.body);
    made.push(record);
    options.onAttempt?.(record);
    if (record.acknowledged) {
      return { delivered: true, attempts: made, alertedTechnicalContact: false };
    }
  }
  return { delivered: false, attempts: made, alertedTechnicalContact: true };
}

function withVerdict(attempt: number, at: Date, status: number, body: string): DeliveryAttempt {
  const failure = findAcknowledgementFailure(status, body);
  return failure === undefined
    ? { attempt, at, acknowledged: true, status, body }
    : { attempt, at, acknowledged: false, status, body, failure };
}

function parseTargetUrl(url: string | URL): URL {
  const text = String(url);
  const target = parseHttpUrl(text);
  if (target) return target;
  if (URL.canParse(text)) {
    throw new TypeError(`deliver(): url must use http:// or https://, got ${JSON.stringify(new URL(text).protocol)}`);
  }
  throw new TypeError(`deliver(): url must be an absolute http:// or https:// URL, got ${JSON.stringify(text)}`);
}

function serialize(notification: object | RawNotification): Buffer {
  if (notification instanceof RawNotification) {
    return Buffer.from(notification.body);
  }
  if (notification === null || typeof notification !== 'object') {
    throw new TypeError('deliver(): notification must be an object or a rawNotification()');
  }
  return Buffer.from(JSON.stringify(notification));
}

function wholeNumber(option: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!isWholeNumber(value, min)) {
    throw new RangeError(
      `deliver(): options.${option} must be a whole number of at least ${min}, got ${String(value)}`,
    );
  }
  return value;
}

/** A wait a timer really keeps: Node fires a longer one after 1 ms, and `AbortSignal.timeout()` throws for it. */
function timerDelay(option: string, value: number | undefined, fallback: number, min: 0 | 1): number {
  if (value === undefined) return fallback;
  if (!isTimerDelay(value, min)) {
    throw new RangeError(`deliver(): options.${option} must be ${timerDelayExpected(min)}, got ${String(value)}`);
  }
  return value;
}
