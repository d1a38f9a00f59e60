import type { ServerResponse } from 'node:http';
import type { NotificationOutcome } from '../../interfaces/payouts-instrumentation.interface.js';
import type { NotificationFieldError } from '../message/payment-method-notification.parser.js';

/** A status and a JSON body, serialised once (every fixed reply is built at module load), and what it stands for. */
export class NotificationReply {
  private constructor(
    readonly status: number,
    readonly body: Buffer,
    readonly outcome: NotificationOutcome,
  ) {}

  static json(status: number, value: unknown, outcome: NotificationOutcome): NotificationReply {
    return new NotificationReply(status, Buffer.from(JSON.stringify(value)), outcome);
  }

  static invalid(errors: readonly NotificationFieldError[]): NotificationReply {
    return NotificationReply.json(400, { statusCode: 400, message: 'Invalid notification', errors }, 'invalid');
  }
}

const error = (statusCode: number, message: string, outcome: NotificationOutcome) =>
  NotificationReply.json(statusCode, { statusCode, message }, outcome);

/** The only reply the service counts as received: `200 {"ResultCode":0}`. */
const ACK = { ResultCode: 0 };

export const NotificationReplies = {
  ack: NotificationReply.json(200, ACK, 'acknowledged'),
  /** The same bytes as `ack`, for a re-send of a notification already handled. */
  duplicate: NotificationReply.json(200, ACK, 'duplicate'),
  unauthorized: error(401, 'Unauthorized', 'unauthorized'),
  notAnObject: error(400, 'The notification must be a JSON object', 'invalid'),
  inProgress: error(409, 'This notification is being handled; send it again later', 'in_progress'),
  payloadTooLarge: error(413, 'Payload too large', 'too_large'),
  unsupportedMediaType: error(415, 'Content-Type must be application/json', 'unsupported_media_type'),
  failed: error(500, 'The notification could not be handled', 'failed'),
} as const;

/** Writes a reply on the framework's response object. */
export type NotificationReplyWriter = (response: unknown, reply: NotificationReply) => void;

interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: Buffer): unknown;
}

/**
 * The response is written directly, so nothing the app adds to its own routes (interceptors that wrap results,
 * serializers, ETags, a charset suffix) can alter the exact bytes the service expects.
 */
export function createNotificationReplyWriter(adapterType: string | undefined): NotificationReplyWriter {
  if (adapterType === 'fastify') {
    return (response, reply) => {
      (response as FastifyReplyLike).code(reply.status).header('content-type', 'application/json').send(reply.body);
    };
  }
  // Express, and any adapter whose response is Node's own `ServerResponse`.
  return (response, reply) => {
    (response as ServerResponse)
      .writeHead(reply.status, { 'content-type': 'application/json', 'content-length': reply.body.length })
      .end(reply.body);
  };
}
