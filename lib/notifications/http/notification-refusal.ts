import type { IncomingHttpHeaders } from 'node:http';
import { printable } from '../../common/printable.js';
import {
  NotificationReplies,
  type NotificationReply,
  unsupportedCharsetReply,
  unsupportedEncodingReply,
} from './notification-reply.js';

/** A reply refusing the request, and why, for the log line. */
export interface NotificationRefusal {
  readonly reply: NotificationReply;
  readonly reason: string;
}

/**
 * What the headers alone refuse, before the body is looked at: a media type other than JSON, a charset other than
 * UTF-8, an encoded body, an empty body. Each is decided from the headers, so that on Fastify the same check runs
 * before Fastify's own parser would refuse the bytes differently (see `NotificationReceiver`).
 */
export function refusalByHeaders(headers: IncomingHttpHeaders): NotificationRefusal | undefined {
  const contentType = headers['content-type'];
  if (contentType !== 'application/json') {
    const refusal = refusalByContentType(contentType);
    if (refusal !== undefined) return refusal;
  }
  const encoding = headers['content-encoding']?.toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    return {
      reply: unsupportedEncodingReply(encoding),
      reason: `Content-Encoding ${printable(encoding)} is not supported`,
    };
  }
  const length = headers['content-length'];
  if (length === '0' || (length === undefined && headers['transfer-encoding'] === undefined)) {
    return { reply: NotificationReplies.notAnObject, reason: 'the body is empty' };
  }
  return undefined;
}

/**
 * `application/json`, in any case, with no charset or `charset=utf-8`: Express's parser decodes UTF-16 and UTF-32
 * and refuses other charsets, Fastify's reads every body as UTF-8, so only UTF-8 is read the same way by both.
 */
function refusalByContentType(contentType: string | undefined): NotificationRefusal | undefined {
  const [mediaType = '', ...parameters] = (contentType ?? '').split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') {
    return {
      reply: NotificationReplies.unsupportedMediaType,
      reason:
        contentType === undefined
          ? 'no Content-Type'
          : `Content-Type ${printable(contentType)} is not application/json`,
    };
  }
  for (const parameter of parameters) {
    const separator = parameter.indexOf('=');
    if (separator === -1 || parameter.slice(0, separator).trim().toLowerCase() !== 'charset') continue;
    const charset = unquote(parameter.slice(separator + 1).trim()).toLowerCase();
    if (charset !== 'utf-8') {
      return { reply: unsupportedCharsetReply(charset), reason: `charset ${printable(charset)} is not UTF-8` };
    }
  }
  return undefined;
}

/**
 * `413` when the body's size is known and over `bodyLimitBytes`: the `Content-Length` (both frameworks refuse a body
 * of another length), else `received`, the bytes counted as they arrived (a chunked body).
 */
export function refusalBySize(
  headers: IncomingHttpHeaders,
  received: number | undefined,
  bodyLimitBytes: number,
): NotificationRefusal | undefined {
  const declared = headers['content-length'];
  const size = declared !== undefined ? Number(declared) : received;
  if (size === undefined || size <= bodyLimitBytes) return undefined;
  return {
    reply: NotificationReplies.payloadTooLarge,
    reason: `the body has ${size} bytes, over bodyLimitBytes (${bodyLimitBytes})`,
  };
}

/** The unauthorized reply, with the failed check. */
export function refusalByVerification(failure: string): NotificationRefusal {
  return { reply: NotificationReplies.unauthorized, reason: failure };
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}
