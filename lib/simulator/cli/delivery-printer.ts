import { escapeControls } from '../../common/printable.js';
import { urlWithoutSecrets } from '../../common/url-without-secrets.js';
import type { DeliveryAttempt, DeliveryReport } from '../deliver-notification.js';

/** Reply bodies are shown up to this length: enough for an error message, short enough for a terminal. */
const SHOWN_BODY_CHARS = 200;

/** The URL with every query value hidden: the notification URL usually carries the shared secret. */
export function displayUrl(url: URL): string {
  return urlWithoutSecrets(url);
}

export function describeStart(eventType: string, url: URL, attempts: number, intervalMs: number): string {
  const schedule = attempts === 1 ? 'one attempt' : `up to ${attempts} attempts, ${describeDuration(intervalMs)} apart`;
  return `Sending ${eventType} to ${displayUrl(url)} (${schedule})`;
}

/** The receiver's reply, and the failure that quotes it, are outside data: shown on one line, controls escaped. */
export function describeAttempt(attempt: DeliveryAttempt): string {
  const reply =
    attempt.status === undefined
      ? 'no reply'
      : `HTTP ${attempt.status} ${escapeControls(attempt.body ?? '', SHOWN_BODY_CHARS)}`.trimEnd();
  const verdict = attempt.acknowledged ? 'acknowledged' : `not acknowledged: ${escapeControls(attempt.failure ?? '')}`;
  return `Attempt ${attempt.attempt} at ${attempt.at.toISOString()}: ${reply} -> ${verdict}`;
}

export function describeOutcome(report: DeliveryReport): string {
  const count = report.attempts.length;
  return report.delivered
    ? `Delivered on attempt ${count}.`
    : `Not delivered after ${count} attempt${count === 1 ? '' : 's'}: the payouts service would now e-mail the merchant's technical contact.`;
}

export function describeDuration(ms: number): string {
  if (ms !== 0 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms !== 0 && ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
