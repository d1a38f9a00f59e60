import type { IncomingHttpHeaders } from 'node:http';
import { type BodyStreamLike, countBody, type CountedBody } from './body-watch.js';

/** What the middleware reads of an Express request. */
export interface ExpressRequestLike {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly ip: string | undefined;
}

/** What the middleware reads of an error Express's body parser answers with. */
export interface ExpressParserErrorLike {
  readonly status?: unknown;
  readonly type?: unknown;
  /** The refused charset or encoding, lower-cased, on those errors. */
  readonly charset?: unknown;
  readonly encoding?: unknown;
}

interface HttpAdapterLike {
  use(
    handler: (error: unknown, request: ExpressRequestLike, response: unknown, next: (error: unknown) => void) => void,
  ): unknown;
}

/**
 * Calls `answered(request, error, response)` for an error that reaches Express's error handling before Nest's own
 * handler, such as one of Express's JSON parser, which runs for every request before any route: added once the routes
 * are registered, this middleware comes after them and before the exception handler Nest adds last. Unless `answered`
 * returns `true` (it wrote the reply), the error goes on to Nest unchanged.
 */
export function onExpressError(
  adapter: HttpAdapterLike,
  answered: (request: ExpressRequestLike, error: ExpressParserErrorLike, response: unknown) => boolean,
): void {
  // Four parameters make it an error-handling middleware for Express.
  adapter.use((error, request, response, next) => {
    if (typeof error === 'object' && error !== null && answered(request, error, response)) return;
    next(error);
  });
}

interface ExpressAppLike {
  readonly router?: { readonly stack?: unknown };
}

interface RouteLayerLike {
  readonly route?: { readonly path?: unknown; readonly methods?: Record<string, unknown> };
}

/**
 * The paths of the app's `POST` routes as Express holds them, each whole (global prefix included), from the app's
 * router (`app.router` of Express 5): read once Nest has registered the routes.
 */
export function expressPostRoutePaths(instance: unknown): string[] {
  const stack = (instance as ExpressAppLike).router?.stack;
  if (!Array.isArray(stack)) return [];
  return stack.flatMap((layer: RouteLayerLike) => {
    const route = layer.route;
    return route !== undefined && typeof route.path === 'string' && route.methods?.post === true ? [route.path] : [];
  });
}

/** What the counting reads of a request as it enters the Express app, before Express adds its own properties. */
interface IncomingRequestLike extends BodyStreamLike {
  readonly headers: IncomingHttpHeaders;
}

interface ExpressHandlerLike {
  handle(this: unknown, request: IncomingRequestLike, ...rest: unknown[]): unknown;
}

/** Per Express app, the bytes of each chunked request body counted so far: one count however many registrations. */
const chunkedBodies = new WeakMap<object, WeakMap<object, CountedBody>>();

/**
 * Counts the bytes of every chunked request body (no `Content-Length`) that reaches the Express app, as its body
 * parser reads them, and returns how to look a request's count up. Express's JSON parser reads the body before any
 * route or Nest middleware runs, and keeps its bytes only when the app keeps raw bodies: the count is taken where every
 * request enters the app (its `handle`, which runs whichever server or parent app calls it), before the parser starts
 * reading. A request with a `Content-Length` costs two header reads; the framework holds its body to that length.
 */
export function countExpressChunkedBodies(instance: unknown): (request: object) => number | undefined {
  const app = instance as ExpressHandlerLike;
  let counts = chunkedBodies.get(app);
  if (counts === undefined) {
    const bodies = new WeakMap<object, CountedBody>();
    const handle = app.handle;
    app.handle = function handleCountingChunkedBodies(request, ...rest) {
      const { headers } = request;
      if (headers['content-length'] === undefined && headers['transfer-encoding'] !== undefined) {
        bodies.set(request, countBody(request));
      }
      return handle.call(this, request, ...rest);
    };
    chunkedBodies.set(app, bodies);
    counts = bodies;
  }
  const found = counts;
  return (request) => found.get(request)?.length;
}
