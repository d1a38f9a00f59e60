import type { IncomingHttpHeaders } from 'node:http';

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
