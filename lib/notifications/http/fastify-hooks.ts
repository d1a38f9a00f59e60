import type { IncomingHttpHeaders } from 'node:http';
import type { BodyStreamLike, WatchedBody } from './body-watch.js';

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

type PreParsingHook = (request: FastifyRequestLike, reply: unknown, payload: BodyStreamLike, done: () => void) => void;
type ErrorHook = (request: FastifyRequestLike, reply: unknown, error: FastifyErrorLike, done: () => void) => void;

/** What an `onRoute` hook reads and sets of a route being registered. */
interface FastifyRouteOptionsLike {
  readonly config?: unknown;
  preParsing?: PreParsingHook | PreParsingHook[];
  onError?: ErrorHook | ErrorHook[];
}

interface FastifyInstanceLike {
  hasRequestDecorator(name: symbol): boolean;
  decorateRequest(name: symbol, value: undefined): unknown;
  addHook(name: 'onRoute', hook: (routeOptions: FastifyRouteOptionsLike) => void): unknown;
  addHook(
    name: 'preParsing',
    hook: (request: FastifyRequestLike, reply: unknown, payload: BodyStreamLike, done: () => void) => void,
  ): unknown;
  addHook(
    name: 'onError',
    hook: (request: FastifyRequestLike, reply: unknown, error: FastifyErrorLike, done: () => void) => void,
  ): unknown;
}

/**
 * The property of a Fastify request that holds what the route's `preParsing` hook learned of its body, for the
 * route's handler. Declared with `decorateRequest` (once per app, whatever the number of notification routes), so that
 * Fastify creates it with every request: set on the route's requests alone, it would give them a shape of their own,
 * and the app's hooks and routes would then see requests of two shapes.
 */
const WATCHED_BODY = Symbol('nestjs-payouts watched body');

interface WatchedRequest {
  [WATCHED_BODY]?: WatchedBody;
}

function declareWatchedBody(instance: FastifyInstanceLike): void {
  if (!instance.hasRequestDecorator(WATCHED_BODY)) instance.decorateRequest(WATCHED_BODY, undefined);
}

/** Keeps what the route learned of a request's body in `preParsing` (see `WATCHED_BODY`). */
export function keepWatchedBody(request: FastifyRequestLike, watched: WatchedBody): void {
  (request as WatchedRequest)[WATCHED_BODY] = watched;
}

/** What the route learned of a request's body in `preParsing`; `undefined` on Express, or for a body not watched. */
export function watchedBodyOf(request: object): WatchedBody | undefined {
  return (request as WatchedRequest)[WATCHED_BODY];
}

/** What the route does in Fastify's `preParsing` and `onError` stages (see `onFastifyPreParsing`, `onFastifyError`). */
export interface FastifyRouteHooks {
  answeredBeforeParsing(request: FastifyRequestLike, reply: unknown, payload: BodyStreamLike): boolean;
  failed(request: FastifyRequestLike, error: FastifyErrorLike): void;
}

/**
 * Gives the hooks to the route whose `config` `isOwnRoute` recognises, and to no other, as Fastify registers it: no
 * other route of the app runs them, and the route's own requests skip the check of which route they are for (Fastify
 * builds a new `routeOptions` object on every read). Only routes registered after this call are seen: Nest registers
 * them once every provider is built, when the app initialises. Returns whether the route was seen, to be asked once
 * the routes are registered.
 */
export function onFastifyRoute(
  instance: unknown,
  isOwnRoute: (config: unknown) => boolean,
  hooks: FastifyRouteHooks,
): () => boolean {
  let seen = false;
  declareWatchedBody(instance as FastifyInstanceLike);
  const preParsing: PreParsingHook = (request, reply, payload, done) => {
    if (!hooks.answeredBeforeParsing(request, reply, payload)) done();
  };
  const onError: ErrorHook = (request, _reply, error, done) => {
    hooks.failed(request, error);
    done();
  };
  (instance as FastifyInstanceLike).addHook('onRoute', (routeOptions) => {
    if (!isOwnRoute(routeOptions.config)) return;
    seen = true;
    // After any hooks of the route's own, as the app's global hooks run before a route's.
    routeOptions.preParsing = [...asList(routeOptions.preParsing), preParsing];
    routeOptions.onError = [...asList(routeOptions.onError), onError];
  });
  return () => seen;
}

function asList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

/*
 * Where the route was registered before `onFastifyRoute` could be called (an app built from a testing module, whose
 * providers are built before it has an HTTP adapter), the hooks are added to the root instance instead: hooks added
 * before it is ready apply to every route, those registered earlier included; each callback then first checks that
 * the request is for the notification route.
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
  declareWatchedBody(instance as FastifyInstanceLike);
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
