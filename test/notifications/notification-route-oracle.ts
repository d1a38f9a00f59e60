import { isUtf8 } from 'node:buffer';
import { isEmail, isISO8601 } from 'class-validator';

/*
 * What the notification route must answer, written from the documented rules (docs/notifications.md's "Replies" and
 * "Express and Fastify", docs/production.md's "Input limits") and not from the route's code, so that a property test can hold the route to them.
 */

/** A request as the property test sends it. */
export interface RouteInput {
  readonly body: Buffer;
  readonly token: 'right' | 'wrong' | 'missing';
  readonly contentType: string | undefined;
  readonly contentEncoding: string | undefined;
  /** Sent in chunks without a Content-Length. */
  readonly chunked: boolean;
}

export type Expected =
  /** `200 {"ResultCode":0}`; `key` identifies the notification across re-sends. */
  | { readonly ack: true; readonly key: string }
  /** A 4xx among `statuses`, never the ack. Where the two frameworks' parsers decide first, either status counts. */
  | { readonly ack: false; readonly statuses: readonly number[] };

const refused = (...statuses: number[]): Expected => ({ ack: false, statuses });

/**
 * The reply for `input` from a route with `bodyLimitBytes` whose app does not keep raw bodies, on `adapter`: both count
 * a chunked body; only Fastify's route sees the bytes then, to refuse bytes that are not UTF-8.
 */
export function expectedReply(input: RouteInput, bodyLimitBytes: number, adapter: 'express' | 'fastify'): Expected {
  // The headers alone.
  const [mediaType = '', ...parameters] = (input.contentType ?? '').split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') return refused(415);
  const charset = parameters
    .map((parameter) => parameter.split('='))
    .find(([name]) => name?.trim().toLowerCase() === 'charset')?.[1];
  if (charset !== undefined && charset.trim().replaceAll('"', '').toLowerCase() !== 'utf-8') return refused(415);
  const encoding = input.contentEncoding?.toLowerCase();
  // Express decodes gzip, deflate and br itself first, and answers 400 to a body that is not so encoded.
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') return refused(415, 400);
  if (!input.chunked && input.body.length === 0) return refused(400);

  // Express's parser reads an empty chunked body as {}, which the route then checks; Fastify's refuses it.
  if (input.body.length === 0) return refused(400, 401);
  // The framework parses before the route: malformed JSON is its 400 (Fastify checks a declared size first).
  const parsed = parseJson(input.body);
  const overLimit = !input.chunked && input.body.length > bodyLimitBytes;
  if (parsed === MALFORMED) return overLimit ? refused(400, 413) : refused(400);
  // Where one framework's parser refuses first and the other leaves it to the route: JSON that is neither an object
  // nor an array (Express's parser is strict), and keys that could replace a prototype (Fastify's refuses them).
  if (typeof parsed !== 'object' || parsed === null || hasPrototypeKey(parsed)) return refused(400, 401, 413);

  if (overLimit) return refused(413);
  if (input.token !== 'right') return refused(401);
  if (input.chunked && input.body.length > bodyLimitBytes) return refused(413);
  const seesBytes = adapter === 'fastify';
  if (seesBytes && !isUtf8(input.body)) return refused(400);
  if (!isValidNotification(parsed)) return refused(400);
  const notification = parsed as Notification;
  return {
    ack: true,
    key: JSON.stringify([
      notification.eventType,
      notification.shopper.id,
      notification.paymentMethod.id,
      notification.timestamp,
    ]),
  };
}

const MALFORMED = Symbol('malformed');

/** Both frameworks read the body as UTF-8 (invalid sequences become U+FFFD), drop a byte order mark and parse. */
function parseJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  try {
    return JSON.parse(text.startsWith('\ufeff') ? text.slice(1) : text) as unknown;
  } catch {
    return MALFORMED;
  }
}

interface Notification {
  eventType: string;
  timestamp: string;
  shopper: { id: string };
  paymentMethod: { id: string };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';
const isPresent = (value: unknown) => value !== undefined && value !== null;

/** The documented validation rules. */
export function isValidNotification(body: unknown): boolean {
  if (!isObject(body) || hasPrototypeKey(body)) return false;
  const { eventType, timestamp, shopper, paymentMethod } = body;
  if (!isNonEmptyString(eventType) || typeof timestamp !== 'string' || !isISO8601(timestamp)) return false;
  if (!isObject(shopper) || !isNonEmptyString(shopper.id)) return false;
  if (isPresent(shopper.partner_shopper_id) && typeof shopper.partner_shopper_id !== 'string') return false;
  if (isPresent(shopper.email) && !isEmailAddress(shopper.email)) return false;
  if (!isObject(paymentMethod) || !isNonEmptyString(paymentMethod.id) || !isNonEmptyString(paymentMethod.type)) {
    return false;
  }
  if (eventType !== 'PAYMENT_METHOD_ADDED' || paymentMethod.type !== 'card') return true;
  const { card } = paymentMethod;
  return (
    isObject(card) &&
    typeof card.lastFour === 'string' &&
    /^\d{4}$/.test(card.lastFour) &&
    typeof card.expirationMonth === 'string' &&
    /^(0[1-9]|1[0-2])$/.test(card.expirationMonth) &&
    typeof card.expirationYear === 'string' &&
    /^\d{4}$/.test(card.expirationYear)
  );
}

/** An e-mail address as `@IsEmail()` has it; a string it cannot even read is none. */
function isEmailAddress(value: unknown): boolean {
  try {
    return typeof value === 'string' && isEmail(value);
  } catch {
    return false;
  }
}

/** `__proto__`, or `constructor` holding a `prototype`, at any depth. */
function hasPrototypeKey(value: unknown): boolean {
  const pending = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null) continue;
    for (const [key, item] of Object.entries(current)) {
      if (key === '__proto__') return true;
      if (key === 'constructor' && typeof item === 'object' && item !== null && Object.hasOwn(item, 'prototype')) {
        return true;
      }
      pending.push(item);
    }
  }
  return false;
}
