import type { IncomingHttpHeaders } from 'node:http';
import type { BodyStreamLike } from './body-watch.js';

/** What the hooks read of a Fastify request. */
export interface FastifyRequestLike {
  readonly headers: IncomingHttpHeaders;
  readonly ip: string | undefined;
  /** The matched route; its `config` is what the route method's `@RouteConfig()` metadata holds. */
  readonly routeOptions: { readonly config?: unknown };
}

/** What the hooks read of an error Fastify answers with, such as its JSON parser's. */
export interface FastifyErrorLike {
  readonly statusCode?: unknown;
  readonly code?: unknown;
}

interface FastifyInstanceLike {
  addHook(
    name: 'preParsing',
    hook: (request: FastifyRequestLike, reply: unknown, payload: BodyStreamLike, done: () => void) => void,
  ): unknown;
  addHook(
    name: 'onError',
    hook: (request: FastifyRequestLike, reply: unknown, error: FastifyErrorLike, done: () => void) => void,
  ): unknown;
}

/*
 * Hooks added to the root instance before it is ready apply to every route, those registered earlier included; each
 * callback first checks that the request is for the notification route.
 */

/**
 * Runs `answered(request, reply, payload)` in Fastify's `preParsing` stage, before the content-type parser reads the
 * body stream `payload`: it returns `true` when it has sent a reply, which ends the request there (Fastify's
 * documented way to answer from a callback hook is to not call `done`).
 */
export function onFastifyPreParsing(
  instance: unknown,
  answered: (request: FastifyRequestLike, reply: unknown, payload: BodyStreamLike) => boolean,
): void {
  (instance as FastifyInstanceLike).addHook('preParsing', (request, reply, payload, done) => {
    if (!answered(request, reply, payload)) done();
  });
}

/** Calls `failed(request, error)` for an error Fastify answers with, such as its JSON parser's, before its reply. */
export function onFastifyError(
  instance: unknown,
  failed: (request: FastifyRequestLike, error: FastifyErrorLike) => void,
): void {
  (instance as FastifyInstanceLike).addHook('onError', (request, _reply, error, done) => {
    failed(request, error);
    done();
  });
}
