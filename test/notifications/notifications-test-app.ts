import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import {
  type DynamicModule,
  type INestApplication,
  type LoggerService,
  Module,
  type Provider,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { PayoutsModule } from 'nestjs-payouts';
import type { NotificationsOptions } from 'nestjs-payouts';

export type AdapterName = 'express' | 'fastify';
export const ADAPTERS: readonly AdapterName[] = ['express', 'fastify'];

export interface NotificationsAppOptions {
  adapter: AdapterName;
  /** Omitted: the key is left out of the module options. */
  notifications?: NotificationsOptions | false;
  /** Register with `forRootAsync({ useFactory })` instead of `forRoot`. */
  async?: boolean;
  /** The modules to import (`PayoutsModule` registrations…) instead of the registration `notifications` describes. */
  imports?: (DynamicModule | Type<unknown>)[];
  providers?: Provider[];
  globalPrefix?: string;
  rawBody?: boolean;
  logger?: LoggerService;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Express `trust proxy` setting, or Fastify's `trustProxy` option. */
  trustProxy?: boolean | string | number;
  /** Any other app setting, applied before the app initialises. */
  configure?: (app: INestApplication) => void;
}

export interface NotificationsApp {
  readonly app: INestApplication;
  /** Absolute URL of `path` on the listening app. */
  url(path: string): string;
  close(): Promise<void>;
}

const PAYOUTS_OPTIONS = { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'test-api-key', accessToken: 'test-token' };

/** Builds the module as an application would, on a real adapter, and listens on a free loopback port. */
export async function createNotificationsApp(options: NotificationsAppOptions): Promise<INestApplication> {
  const moduleOptions = {
    ...PAYOUTS_OPTIONS,
    ...('notifications' in options && { notifications: options.notifications }),
  };
  const payouts = options.async
    ? PayoutsModule.forRootAsync({ useFactory: async () => moduleOptions })
    : PayoutsModule.forRoot(moduleOptions);

  class TestAppModule {}
  Module({ imports: options.imports ?? [payouts], providers: options.providers ?? [] })(TestAppModule);

  const adapter =
    options.adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(fastifyOptions(options.trustProxy));
  const app = await NestFactory.create(TestAppModule, adapter, {
    logger: options.logger ?? false,
    abortOnError: false,
    rawBody: options.rawBody ?? false,
  });
  if (options.adapter === 'express' && options.trustProxy !== undefined) {
    (app as NestExpressApplication).set('trust proxy', options.trustProxy);
  }
  if (options.globalPrefix) app.setGlobalPrefix(options.globalPrefix);
  options.configure?.(app);
  return app;
}

/** The error that creating and initialising the app fails with; fails the test if the app boots. */
export async function bootError(options: NotificationsAppOptions): Promise<unknown> {
  try {
    const app = await createNotificationsApp(options);
    try {
      await app.init();
    } finally {
      await app.close();
    }
  } catch (error) {
    return error;
  }
  throw new Error('the app booted');
}

/** Fastify's `trustProxy` takes each of these kinds of value, though its option types do not take their union. */
function fastifyOptions(
  trustProxy: NotificationsAppOptions['trustProxy'],
): ConstructorParameters<typeof FastifyAdapter>[0] {
  return trustProxy === undefined ? {} : ({ trustProxy } as ConstructorParameters<typeof FastifyAdapter>[0]);
}

export async function startNotificationsApp(options: NotificationsAppOptions): Promise<NotificationsApp> {
  const app = await createNotificationsApp(options);
  const host = options.host ?? '127.0.0.1';
  try {
    await app.listen(0, host);
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.getHttpServer().address() as { port: number };
  const origin = host.includes(':') ? `http://[${host}]:${address.port}` : `http://${host}:${address.port}`;
  return {
    app,
    url: (path) => `${origin}/${path.replace(/^\//, '')}`,
    close: () => app.close(),
  };
}

export interface HttpReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface PostOptions {
  /** Extra headers; `undefined` leaves a header out, `Content-Type` included. */
  headers?: Record<string, string | undefined>;
  /** Send the body in two chunks without a Content-Length. */
  chunked?: boolean;
}

/** POSTs raw bytes; an object is sent as JSON with `Content-Type: application/json` unless headers say otherwise. */
export function post(url: string, body: unknown, options: PostOptions = {}): Promise<HttpReply> {
  const payload =
    typeof body === 'string' || Buffer.isBuffer(body) ? Buffer.from(body) : Buffer.from(JSON.stringify(body));
  const headers = Object.fromEntries(
    Object.entries({ 'content-type': 'application/json', ...options.headers }).filter(
      ([, value]) => value !== undefined,
    ),
  ) as Record<string, string>;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (options.chunked) {
      const middle = Math.floor(payload.length / 2);
      req.write(payload.subarray(0, middle));
      req.end(payload.subarray(middle));
    } else {
      req.end(payload);
    }
  });
}

let sequence = 0;

/** A valid `PAYMENT_METHOD_ADDED` notification as in the interface sample, unique per call unless overridden. */
export function cardAdded(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    eventType: 'PAYMENT_METHOD_ADDED',
    timestamp: '2025-03-14T09:26:53.589Z',
    shopper: { id: `shp_${sequence}`, partner_shopper_id: 'merchant-42', email: 'shopper@example.com' },
    paymentMethod: {
      id: `pmt_${sequence}`,
      type: 'card',
      card: { lastFour: '4242', expirationMonth: '04', expirationYear: '2031' },
    },
    ...overrides,
  };
}
