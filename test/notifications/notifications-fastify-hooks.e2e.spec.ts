import { Body, Controller, HttpCode, Post, Req, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { gzipSync } from 'node:zlib';
import { PayoutsModule } from 'nestjs-payouts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import { cardAdded, post, startNotificationsApp } from './notifications-test-app.js';

const PATH = 'payouts/notifications';
const ACK = '{"ResultCode":0}';
const PAYOUTS_OPTIONS = { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'test-api-key', accessToken: 'test-token' };

/** Another route of the app, which the route's hooks must leave alone. */
@Controller('other')
class OtherController {
  @Post()
  @HttpCode(200)
  receive(@Body() body: unknown): unknown {
    return { got: body };
  }
}

/** Another route, which says which properties of the package's every request of the app has. */
@Controller('shape')
class ShapeController {
  @Post()
  @HttpCode(200)
  receive(@Req() request: Record<symbol, unknown>): unknown {
    const own = Object.getOwnPropertySymbols(request).filter((key) => key.description?.startsWith('nestjs-payouts'));
    return own.map((key) => ({ property: key.description, value: request[key] ?? null }));
  }
}

/** The hooks the Fastify instance runs for every route (Fastify keeps them under a symbol of its own). */
function globalHooks(app: INestApplication, name: 'preParsing' | 'onError'): unknown[] {
  const instance = app.getHttpAdapter().getInstance() as Record<symbol, Record<string, unknown[]>>;
  const hooks = Object.getOwnPropertySymbols(instance).find((symbol) => symbol.description === 'fastify.hooks')!;
  return instance[hooks]![name]!;
}

/**
 * On Fastify the route checks the headers, the declared size and the body's bytes in hooks that run before Fastify's
 * parser. They are the route's own when Nest registers the route after the package's providers are built (an app from
 * `NestFactory.create`), and global hooks that first look at which route a request is for otherwise (an app from a
 * testing module, whose providers are built before it has an adapter). Both refuse the same requests the same way.
 */
describe.each([
  ['NestFactory.create (the route’s own hooks)', false, 0],
  ['a testing module (global hooks)', true, 1],
] as const)('the Fastify route built with %s', (_name, fromTestingModule, globalHookCount) => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    const notifications = { verification: 'none' as const, bodyLimitBytes: 2048 };
    if (fromTestingModule) {
      const moduleRef = await Test.createTestingModule({
        imports: [PayoutsModule.forRoot({ ...PAYOUTS_OPTIONS, notifications })],
        controllers: [OtherController, ShapeController],
        providers: [CardEvents],
      }).compile();
      app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
      await app.listen(0, '127.0.0.1');
      base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    } else {
      const started = await startNotificationsApp({
        adapter: 'fastify',
        imports: [
          PayoutsModule.forRoot({ ...PAYOUTS_OPTIONS, notifications }),
          { module: class OtherModule {}, controllers: [OtherController, ShapeController] },
        ],
        providers: [CardEvents],
      });
      app = started.app;
      base = started.url('').replace(/\/$/, '');
    }
  });

  afterAll(async () => {
    await app?.close();
  });

  it('adds a global hook only where the route was registered before its own hooks could be', () => {
    expect(globalHooks(app, 'preParsing')).toHaveLength(globalHookCount);
    expect(globalHooks(app, 'onError')).toHaveLength(globalHookCount);
  });

  it('acknowledges a valid notification and hands it to the handler', async () => {
    const events = app.get(CardEvents);
    const before = events.received.length;
    const reply = await post(`${base}/${PATH}`, cardAdded());
    expect(reply).toMatchObject({ status: 200, body: ACK });
    expect(events.received.length - before).toBe(1);
  });

  it('refuses a charset, an encoding and a declared size before the parser, with its own replies', async () => {
    const body = JSON.stringify(cardAdded());
    const charset = await post(`${base}/${PATH}`, body, {
      headers: { 'content-type': 'application/json; charset=utf-16' },
    });
    expect(charset.status).toBe(415);
    expect(JSON.parse(charset.body)).toEqual({ statusCode: 415, message: 'unsupported charset "UTF-16"' });
    const encoded = await post(`${base}/${PATH}`, gzipSync(body), { headers: { 'content-encoding': 'gzip' } });
    expect(encoded.status).toBe(415);
    expect(JSON.parse(encoded.body)).toEqual({ statusCode: 415, message: 'unsupported content encoding "gzip"' });
    const large = await post(`${base}/${PATH}`, JSON.stringify({ ...cardAdded(), padding: 'x'.repeat(4096) }));
    expect(large.status).toBe(413);
    expect(JSON.parse(large.body)).toEqual({ statusCode: 413, message: 'request entity too large' });
  });

  it('sees bytes that are not UTF-8, which Fastify’s parser would decode unseen', async () => {
    const events = app.get(CardEvents);
    const before = events.received.length;
    const [open, rest] = ['{"note":"', `",${JSON.stringify(cardAdded()).slice(1)}`];
    const reply = await post(
      `${base}/${PATH}`,
      Buffer.concat([Buffer.from(open), Buffer.from([0xff]), Buffer.from(rest)]),
    );
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body)).toMatchObject({ errors: [{ field: 'note', message: 'must be valid UTF-8' }] });
    expect(events.received.length - before).toBe(0);
  });

  it('gives every request of the app the property that carries a watched body, so that all keep one shape', async () => {
    const reply = await post(`${base}/shape`, JSON.stringify({ a: 1 }));
    expect(reply).toMatchObject({ status: 200, body: '[{"property":"nestjs-payouts watched body","value":null}]' });
  });

  it('leaves the app’s other routes to Fastify', async () => {
    const reply = await post(`${base}/other`, JSON.stringify({ a: 1 }), {
      headers: { 'content-type': 'application/json; charset=utf-16' },
    });
    expect(reply.status).not.toBe(415);
    const plain = await post(`${base}/other`, JSON.stringify({ a: 1 }));
    expect(plain).toMatchObject({ status: 200, body: '{"got":{"a":1}}' });
  });
});
