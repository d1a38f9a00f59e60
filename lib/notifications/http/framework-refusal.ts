import type { ExpressParserErrorLike } from './express-hooks.js';
import type { FastifyErrorLike } from './fastify-hooks.js';
import { printable } from '../../common/printable.js';

/*
 * Why the framework refused a notification before the route ran, for the refusal log: from the error's `type` or
 * `code`, never from its message, which may quote the body.
 */

const EXPRESS_REASONS: Readonly<Record<string, string>> = {
  'entity.parse.failed': "the body is not a JSON object (refused by Express's JSON parser)",
  'entity.too.large': "the body is over the JSON parser's own limit (refused by Express's JSON parser)",
  'request.size.invalid': "the body does not match its Content-Length (refused by Express's JSON parser)",
  'request.aborted': 'the client aborted the request',
};

const FASTIFY_REASONS: Readonly<Record<string, string>> = {
  FST_ERR_CTP_INVALID_JSON_BODY:
    "the body is not valid JSON, or has a key that could replace a prototype (refused by Fastify's JSON parser)",
  FST_ERR_CTP_EMPTY_JSON_BODY: "the body is empty (refused by Fastify's JSON parser)",
  FST_ERR_CTP_BODY_TOO_LARGE: "the body is over Fastify's own bodyLimit",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'the body does not match its Content-Length (refused by Fastify)',
};

/**
 * The status and reason of a 4xx error from Express's body parser, or `undefined` for any other error. A charset or
 * an encoding it refuses is named as the route names those it refuses itself.
 */
export function expressRefusal(error: ExpressParserErrorLike): { status: number; reason: string } | undefined {
  const found = refusal(error.status, error.type, EXPRESS_REASONS, 'Express');
  if (found === undefined) return undefined;
  if (error.type === 'charset.unsupported' && typeof error.charset === 'string') {
    return { status: found.status, reason: `charset ${printable(error.charset)} is not UTF-8` };
  }
  if (error.type === 'encoding.unsupported' && typeof error.encoding === 'string') {
    return { status: found.status, reason: `Content-Encoding ${printable(error.encoding)} is not supported` };
  }
  return found;
}

/** The status and reason of a 4xx error Fastify answers with, or `undefined` for any other error. */
export function fastifyRefusal(error: FastifyErrorLike): { status: number; reason: string } | undefined {
  return refusal(error.statusCode, error.code, FASTIFY_REASONS, 'Fastify');
}

function refusal(
  status: unknown,
  kind: unknown,
  reasons: Readonly<Record<string, string>>,
  framework: string,
): { status: number; reason: string } | undefined {
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  const known = typeof kind === 'string' && Object.hasOwn(reasons, kind) ? reasons[kind] : undefined;
  return { status, reason: known ?? `refused by ${framework} before the route` };
}
