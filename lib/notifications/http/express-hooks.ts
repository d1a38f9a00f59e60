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
 * Calls `failed(request, error)` for an error that reaches Express's error handling before Nest's own handler, such
 * as one of Express's JSON parser, which runs for every request before any route: added once the routes are
 * registered, this middleware comes after them and before the exception handler Nest adds last. The error goes on
 * to Nest unchanged.
 */
export function onExpressError(
  adapter: HttpAdapterLike,
  failed: (request: ExpressRequestLike, error: ExpressParserErrorLike) => void,
): void {
  // Four parameters make it an error-handling middleware for Express.
  adapter.use((error, request, _response, next) => {
    if (typeof error === 'object' && error !== null) failed(request, error);
    next(error);
  });
}
