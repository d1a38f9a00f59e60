import type { ServerResponse } from 'node:http';
import type { NotificationOutcome } from '../../interfaces/payouts-instrumentation.interface.js';
import type { NotificationFieldError } from '../message/payment-method-notification.parser.js';

/** The `Content-Type` of every reply of the route, as both frameworks send JSON. */
export const NOTIFICATION_REPLY_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * A status and a JSON body, serialised once (every fixed reply is built at module load), and what it stands for.
 * The body is a string: Node writes a string body in the same packet as the head, a `Buffer` in a second one
 * (Fastify, given a string, adds `charset=utf-8` to a JSON type that has none, hence the constant's charset).
 */
export class NotificationReply {
  /** The body's length in bytes, for `Content-Length`. */
  readonly byteLength: number;

  private constructor(
    readonly status: number,
    readonly body: string,
    readonly outcome: NotificationOutcome,
  ) {
    this.byteLength = Buffer.byteLength(body);
  }

  static json(status: number, value: unknown, outcome: NotificationOutcome): NotificationReply {
    return new NotificationReply(status, JSON.stringify(value), outcome);
  }

  static invalid(errors: readonly NotificationFieldError[]): NotificationReply {
    return NotificationReply.json(400, { statusCode: 400, message: 'Invalid notification', errors }, 'invalid');
  }
}

const error = (statusCode: number, message: string, outcome: NotificationOutcome) =>
  NotificationReply.json(statusCode, { statusCode, message }, outcome);

/*
 * The wording of the `413` and of the `415`s for a charset or an encoding is that of Express's body parser, which
 * refuses some of these requests before the route runs: the same bytes then get the same reply on either adapter,
 * whichever of the two answered.
 */

/** `415` for a `charset` other than UTF-8, named in capitals as Express's parser names it. */
export function unsupportedCharsetReply(charset: string): NotificationReply {
  return error(415, `unsupported charset "${charset.toUpperCase()}"`, 'unsupported_media_type');
}

/** `415` for a `Content-Encoding` other than `identity`, lower-cased as Express's parser reports it. */
export function unsupportedEncodingReply(encoding: string): NotificationReply {
  return error(415, `unsupported content encoding "${encoding}"`, 'unsupported_media_type');
}

/** The only reply the service counts as received: `200 {"ResultCode":0}`. */
const ACK = { ResultCode: 0 };

export const NotificationReplies = {
  ack: NotificationReply.json(200, ACK, 'acknowledged'),
  /** The same bytes as `ack`, for a re-send of a notification already handled. */
  duplicate: NotificationReply.json(200, ACK, 'duplicate'),
  /** The same bytes as `ack`, for a notification a queue dispatcher stored for its workers. */
  enqueued: NotificationReply.json(200, ACK, 'enqueued'),
  unauthorized: error(401, 'Unauthorized', 'unauthorized'),
  notAnObject: error(400, 'The notification must be a JSON object', 'invalid'),
  inProgress: error(409, 'This notification is being handled; send it again later', 'in_progress'),
  payloadTooLarge: error(413, 'request entity too large', 'too_large'),
  unsupportedMediaType: error(415, 'Content-Type must be application/json', 'unsupported_media_type'),
  failed: error(500, 'The notification could not be handled', 'failed'),
} as const;

/** Writes a reply on the framework's response object. */
export type NotificationReplyWriter = (response: unknown, reply: NotificationReply) => void;

interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: string): unknown;
}

/**
 * The response is written directly, so nothing the app adds to its own routes (interceptors that wrap results,
 * serializers, ETags, a charset suffix) can alter the exact bytes the service expects.
 */
export function createNotificationReplyWriter(adapterType: string | undefined): NotificationReplyWriter {
  if (adapterType === 'fastify') {
    return (response, reply) => {
      (response as FastifyReplyLike)
        .code(reply.status)
        .header('content-type', NOTIFICATION_REPLY_CONTENT_TYPE)
        .send(reply.body);
    };
  }
  // Express, and any adapter whose response is Node's own `ServerResponse`.
  return (response, reply) => {
    (response as ServerResponse)
      .writeHead(reply.status, { 'content-type': NOTIFICATION_REPLY_CONTENT_TYPE, 'content-length': reply.byteLength })
      .end(reply.body);
  };
}
