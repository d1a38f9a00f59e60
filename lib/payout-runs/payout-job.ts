import { hash } from 'node:crypto';
import { type CreatePayoutRequest, PayoutValidationError } from '../index.js';
import type { PayoutRunsConfig } from './payout-runs-options.js';

/**
 * What a job holds: the payout request as given, its run, and the trace context of its `enqueue()` when telemetry
 * records traces (W3C `traceparent`/`tracestate`). Never a credential.
 */
export interface PayoutJobData {
  readonly request: CreatePayoutRequest;
  readonly runId: string;
  readonly trace?: Readonly<Record<string, string>>;
}

/**
 * The key of a `request_id` in the queue's Redis keys and the job's id: one per `request_id` per account (each account
 * has its own queue). BullMQ refuses `:` and integer-like ids, and a `request_id` may hold anything, hence a hash.
 */
export function payoutKey(requestId: string): string {
  return hash('sha256', requestId, 'hex');
}

export function payoutJobId(requestId: string): string {
  return `payout-${payoutKey(requestId)}`;
}

/** One job as `addBulk()` takes it. */
export interface PayoutJobSpec {
  readonly name: string;
  readonly data: PayoutJobData;
  readonly opts: object;
}

/** A payout's job: its id from the `request_id`, the account's attempts and backoff, kept for the dedupe window. */
export function payoutJobSpec(
  request: CreatePayoutRequest,
  runId: string,
  trace: PayoutJobData['trace'],
  { attempts, backoffMs, dedupeWindowMs }: Pick<PayoutRunsConfig, 'attempts' | 'backoffMs' | 'dedupeWindowMs'>,
): PayoutJobSpec {
  const age = Math.ceil(dedupeWindowMs / 1000);
  return {
    name: 'payout',
    data: trace === undefined ? { request, runId } : { request, runId, trace },
    opts: {
      jobId: payoutJobId(request.request_id),
      attempts,
      backoff: { type: 'exponential', delay: backoffMs },
      removeOnComplete: { age },
      removeOnFail: { age },
    },
  };
}

/**
 * How deep a request may nest. Far beyond any payout body, and low enough that fingerprinting, storing and sending it
 * never exhaust the stack.
 */
export const MAX_PAYOUT_DEPTH = 64;

/**
 * A fingerprint of the body: the same payout written with its fields in another order has the same one, any other
 * difference a different one. Throws `PayoutValidationError`, and nothing else, for a body that has none: nested
 * deeper than `MAX_PAYOUT_DEPTH` (or holding itself) or holding a `bigint`, naming its top-level field, or one whose
 * reading throws (a getter or a proxy of the caller's).
 */
export function payoutFingerprint(request: CreatePayoutRequest): string {
  let json: string;
  try {
    json = canonicalJson(request, 0, undefined);
  } catch (error) {
    if (error instanceof PayoutValidationError) throw error;
    // The caller's own error is not echoed: it may quote what the body holds.
    throw new PayoutValidationError([{ path: '', messages: ['must be plain data: reading it threw'] }]);
  }
  return hash('sha256', json, 'hex');
}

/**
 * JSON with every object's keys in code-unit order and `undefined` members left out, as `JSON.stringify` leaves them.
 * `topLevelKey` is the top-level field being written (`undefined` at the top), named only by an error (see `pathOf`).
 */
function canonicalJson(value: unknown, depth: number, topLevelKey: string | undefined): string {
  if (typeof value === 'bigint') {
    throw new PayoutValidationError([
      { path: pathOf(topLevelKey), messages: ['must hold JSON values: a bigint is not one'] },
    ]);
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (depth >= MAX_PAYOUT_DEPTH) {
    throw new PayoutValidationError([
      { path: pathOf(topLevelKey), messages: [`must not nest more than ${MAX_PAYOUT_DEPTH} levels deep`] },
    ]);
  }
  // Plain loops and one string built as it goes: this runs for every item of an enqueue of thousands.
  if (Array.isArray(value)) {
    let json = '[';
    for (let i = 0; i < value.length; i++) {
      json += (i === 0 ? '' : ',') + canonicalJson(value[i], depth + 1, topLevelKey);
    }
    return json + ']';
  }
  const object = value as Record<string, unknown>;
  const keys = sortedKeys(object);
  let json = '{';
  for (const key of keys) {
    const item = object[key];
    if (item === undefined) continue;
    json += (json.length === 1 ? '' : ',') + JSON.stringify(key) + ':';
    json += canonicalJson(item, depth + 1, depth === 0 ? key : topLevelKey);
  }
  return json + '}';
}

/**
 * An object's own enumerable keys in code-unit order, as `sort()` orders strings: a payout's objects have a handful of
 * keys, which an insertion sort orders in less time than `sort()` takes.
 */
function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  for (let next = 1; next < keys.length; next++) {
    const key = keys[next]!;
    let at = next - 1;
    for (; at >= 0 && keys[at]! > key; at--) keys[at + 1] = keys[at]!;
    keys[at + 1] = key;
  }
  return keys;
}

/** A top-level field as an error names it: an unknown field's name is the caller's text, so only a plain one. */
function pathOf(topLevelKey: string | undefined): string {
  if (topLevelKey === undefined) return '';
  return /^[\w.-]{1,64}$/.test(topLevelKey) ? topLevelKey : '(a field)';
}

/** Job data as a worker reads it back: `undefined` when it is not what this version writes. */
export function readPayoutJobData(data: unknown): PayoutJobData | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const { request, runId } = data as Record<string, unknown>;
  if (request === null || typeof request !== 'object' || typeof runId !== 'string') return undefined;
  if (typeof (request as { request_id?: unknown }).request_id !== 'string') return undefined;
  const { trace } = data as { trace?: unknown };
  // An unreadable trace context only loses the link to the enqueue's trace.
  if (trace !== undefined && !isStringRecord(trace)) return { request: request as CreatePayoutRequest, runId };
  return data as PayoutJobData;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every((field) => typeof field === 'string');
}
