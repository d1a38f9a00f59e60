import 'reflect-metadata';
import { Controller, Inject, Injectable, Module, type OnModuleInit, Post, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { ACK_BODY, NOTIFICATION_PATH } from '../notification-sample.js';
import { serveNestApp } from './nest-server.js';
import { argValue } from '../command-line.js';

/**
 * 3h. The floor of the package's route: a Nest route that answers the ack at once, as the package's does (`@Res()`,
 * the reply written directly), with every hook the package adds to its route and none of their work. On Fastify: a
 * `preParsing` and an `onError` hook given to this route only as it is registered (`onRoute`), the first adding the
 * one `data` listener that keeps the body's chunks; on Express: an error-handling middleware after the routes. What
 * the package's route costs above this is its own work: checks, verification, validation, the store, the handler.
 *
 * 3hk, with `--remember-keys` (and `--max-entries=N`, default 100,000 as the package's store): the same route also
 * remembers each notification's dedupe key for a day, as the least any route that refuses a re-send in memory must
 * keep: the key (the package's, `eventType:shopper.id:paymentMethod.id:timestamp`, whose parts need no encoding in
 * the bench's bodies) and its expiry in one `Map`, the oldest N/256 keys dropped at once when it holds more than N.
 * Nothing is checked or refused: what it costs above 3h is what keeping the keys costs, V8's collections included.
 */
type Hook = (...args: unknown[]) => void;
interface RouteOptionsLike {
  url?: string;
  method?: string | string[];
  preParsing?: Hook | Hook[];
  onError?: Hook | Hook[];
}
interface FastifyLike {
  addHook(name: 'onRoute', hook: (options: RouteOptionsLike) => void): void;
}
interface PayloadLike {
  prependListener(event: 'data', listener: (chunk: Buffer) => void): void;
}
interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: string): void;
}

const CONTENT_TYPE = 'application/json; charset=utf-8';
const DAY_MS = 24 * 60 * 60 * 1000;
const REMEMBER_KEYS = process.argv.includes('--remember-keys');
const MAX_KEYS = Number(argValue('max-entries') ?? 100_000);
/** Keys dropped at once when full: 1/256 of the bound, as the package's store does. */
const EVICTION_BATCH = Math.ceil(MAX_KEYS / 256);

interface NotificationLike {
  eventType: string;
  timestamp: string;
  shopper: { id: string };
  paymentMethod: { id: string };
}

/** Each key's expiry, in arrival order (a `Map` keeps it): the first key is the oldest. */
const keys = new Map<string, number>();

function remember(body: NotificationLike): void {
  // Joined, as the package joins its key: one flat string, not a rope holding on to the body's strings.
  const key = [body.eventType, body.shopper.id, body.paymentMethod.id, body.timestamp].join(':');
  if (keys.has(key)) return;
  keys.set(key, Date.now() + DAY_MS);
  if (keys.size <= MAX_KEYS) return;
  // A batch through one iterator: a `Map` keeps a deleted key's slot until it is rebuilt, and each new iterator walks
  // past those slots from the start, so dropping one key per notification would walk them all every time.
  let left = EVICTION_BATCH;
  for (const oldest of keys.keys()) {
    keys.delete(oldest);
    if (--left === 0) break;
  }
}

const asList = (hooks: Hook | Hook[] | undefined) =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

@Injectable()
class RouteHooks implements OnModuleInit {
  readonly fastify: boolean;

  constructor(@Inject(HttpAdapterHost) private readonly host: HttpAdapterHost) {
    // On Fastify before Nest registers the routes, as the package does.
    const adapter = host.httpAdapter;
    this.fastify = adapter.getType() === 'fastify';
    if (this.fastify) {
      const preParsing = (_request: unknown, _reply: unknown, payload: PayloadLike, done: () => void) => {
        const chunks: Buffer[] = [];
        payload.prependListener('data', (chunk) => chunks.push(chunk));
        done();
      };
      const onError = (_request: unknown, _reply: unknown, _error: unknown, done: () => void) => done();
      (adapter.getInstance() as FastifyLike).addHook('onRoute', (options) => {
        if (options.url !== NOTIFICATION_PATH || options.method !== 'POST') return;
        options.preParsing = [...asList(options.preParsing), preParsing as Hook];
        options.onError = [...asList(options.onError), onError as Hook];
      });
    }
  }

  /** On Express once the routes are registered, as the package does, so that it comes after them. */
  onModuleInit(): void {
    if (this.fastify) return;
    this.host.httpAdapter.use((error: unknown, _request: unknown, _response: unknown, next: (error: unknown) => void) =>
      next(error),
    );
  }
}

/** Writes the ack at once, as the package's route does. */
function acknowledge(fastify: boolean, response: unknown): void {
  if (fastify) {
    (response as FastifyReplyLike).code(200).header('content-type', CONTENT_TYPE).send(ACK_BODY);
  } else {
    (response as ServerResponse)
      .writeHead(200, { 'content-type': CONTENT_TYPE, 'content-length': ACK_BODY.length })
      .end(ACK_BODY);
  }
}

@Controller(NOTIFICATION_PATH)
class NotificationsController {
  constructor(@Inject(RouteHooks) private readonly hooks: RouteHooks) {}

  @Post()
  receive(@Res() response: unknown): void {
    acknowledge(this.hooks.fastify, response);
  }
}

/** 3hk: a controller of its own, so that 3h's route stays as it was, without the request among its parameters. */
@Controller(NOTIFICATION_PATH)
class RememberingNotificationsController {
  constructor(@Inject(RouteHooks) private readonly hooks: RouteHooks) {}

  @Post()
  receive(@Req() request: { body: NotificationLike }, @Res() response: unknown): void {
    remember(request.body);
    acknowledge(this.hooks.fastify, response);
  }
}

@Module({
  controllers: [REMEMBER_KEYS ? RememberingNotificationsController : NotificationsController],
  providers: [RouteHooks],
})
class AppModule {}

await serveNestApp(AppModule);
