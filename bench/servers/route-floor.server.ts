import 'reflect-metadata';
import { Controller, Inject, Injectable, Module, type OnModuleInit, Post, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { ACK_BODY, NOTIFICATION_PATH } from '../notification-sample.js';
import { serveNestApp } from './nest-server.js';

/**
 * 3h. The floor of the package's route: a Nest route that answers the ack at once, as the package's does (`@Res()`,
 * the reply written directly), with every hook the package adds to its route and none of their work. On Fastify: a
 * `preParsing` and an `onError` hook given to this route only as it is registered (`onRoute`), the first adding the
 * one `data` listener that keeps the body's chunks; on Express: an error-handling middleware after the routes. What
 * the package's route costs above this is its own work: checks, verification, validation, the store, the handler.
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

@Controller(NOTIFICATION_PATH)
class NotificationsController {
  constructor(@Inject(RouteHooks) private readonly hooks: RouteHooks) {}

  @Post()
  receive(@Res() response: unknown): void {
    if (this.hooks.fastify) {
      (response as FastifyReplyLike).code(200).header('content-type', CONTENT_TYPE).send(ACK_BODY);
    } else {
      (response as ServerResponse)
        .writeHead(200, { 'content-type': CONTENT_TYPE, 'content-length': ACK_BODY.length })
        .end(ACK_BODY);
    }
  }
}

@Module({ controllers: [NotificationsController], providers: [RouteHooks] })
class AppModule {}

await serveNestApp(AppModule);
