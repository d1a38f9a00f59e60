import type { IncomingHttpHeaders } from 'node:http';

/** What the hook reads of a Fastify request. */
export interface FastifyRequestLike {
  readonly headers: IncomingHttpHeaders;
  readonly ip: string | undefined;
  /** The matched route; its `config` is what the route method's `@RouteConfig()` metadata holds. */
  readonly routeOptions: { readonly config?: unknown };
}

interface FastifyInstanceLike {
  addHook(
    name: 'preParsing',
    hook: (request: FastifyRequestLike, reply: unknown, payload: unknown, done: () => void) => void,
  ): unknown;
}

/**
 * Runs `answered(request, reply)` in Fastify's `preParsing` stage, before the content-type parser reads the body:
 * it returns `true` when it has sent a reply, which ends the request there (Fastify's documented way to answer from a
 * callback hook is to not call `done`). Hooks added before the instance is ready apply to routes registered earlier.
 */
export function onFastifyPreParsing(
  instance: unknown,
  answered: (request: FastifyRequestLike, reply: unknown) => boolean,
): void {
  (instance as FastifyInstanceLike).addHook('preParsing', (request, reply, _payload, done) => {
    if (!answered(request, reply)) done();
  });
}
