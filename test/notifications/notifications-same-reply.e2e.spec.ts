import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import {
  type AdapterName,
  ADAPTERS,
  cardAdded,
  type HttpReply,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';

const PATH = 'payouts/notifications';
const ACK = '{"ResultCode":0}';
const JSON_TYPE = 'application/json';

interface Input {
  readonly body: Buffer;
  readonly headers?: Record<string, string | undefined>;
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
/** A valid notification with `raw` spliced in as its first member, for keys and bytes `JSON.stringify` cannot write. */
const withMember = (raw: string | Buffer) => {
  const [open, rest] = [Buffer.from('{'), json(cardAdded()).subarray(1)];
  return Buffer.concat([open, Buffer.from(raw), Buffer.from(','), rest]);
};
const unsupported = (message: string) => ({ status: 415, body: { statusCode: 415, message } });

/*
 * The same bytes get the same status and the same body on Express and on Fastify, whichever answers: the route, or
 * the framework's own parser, whose wording the route uses for the refusals the two share.
 */
describe('the same request gets the same reply on Express and Fastify', () => {
  const apps = new Map<AdapterName, NotificationsApp>();

  beforeAll(async () => {
    for (const adapter of ADAPTERS) {
      apps.set(
        adapter,
        await startNotificationsApp({ adapter, notifications: { verification: 'none' }, providers: [CardEvents] }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.close()));
  });

  async function replies(input: Input): Promise<Record<AdapterName, HttpReply & { handled: number }>> {
    const entries = await Promise.all(
      ADAPTERS.map(async (adapter) => {
        const app = apps.get(adapter)!;
        const events = app.app.get(CardEvents);
        const before = events.received.length;
        const reply = await post(app.url(PATH), input.body, { headers: input.headers });
        return [adapter, { ...reply, handled: events.received.length - before }] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<AdapterName, HttpReply & { handled: number }>;
  }

  async function expectSameReply(input: Input, expected: { status: number; body: unknown }): Promise<void> {
    const { express, fastify } = await replies(input);
    for (const reply of [express, fastify]) {
      expect(reply.status).toBe(expected.status);
      expect(JSON.parse(reply.body)).toEqual(expected.body);
      expect(reply.handled).toBe(expected.status === 200 ? 1 : 0);
    }
    expect(fastify.body).toBe(express.body);
  }

  describe('charsets other than UTF-8 get 415 naming the charset', () => {
    it.each([
      ['latin1', Buffer.from(JSON.stringify(cardAdded()), 'latin1'), 'LATIN1'],
      ['utf-16le', Buffer.from(JSON.stringify(cardAdded()), 'utf16le'), 'UTF-16LE'],
      ['"UTF-16"', Buffer.from(JSON.stringify(cardAdded()), 'utf16le'), 'UTF-16'],
      ['utf8', json(cardAdded()), 'UTF8'],
    ])('charset=%s', async (charset, body, named) => {
      await expectSameReply(
        { body, headers: { 'content-type': `${JSON_TYPE}; charset=${charset}` } },
        unsupported(`unsupported charset "${named}"`),
      );
    });

    // Express's parser decodes UTF-16 and UTF-32 first: bytes that do not decode as declared used to get its 400.
    it.each([
      ['utf-16', json(cardAdded()), 'UTF-16'],
      ['utf-16be', json(cardAdded()), 'UTF-16BE'],
      ['utf-16le', Buffer.from('{"eventType":', 'utf16le'), 'UTF-16LE'],
      ['utf-32', json(cardAdded()), 'UTF-32'],
    ])('charset=%s on bytes that are not JSON in it', async (charset, body, named) => {
      await expectSameReply(
        { body, headers: { 'content-type': `${JSON_TYPE}; charset=${charset}` } },
        unsupported(`unsupported charset "${named}"`),
      );
    });

    it.each([['utf-8'], ['UTF-8'], ['"utf-8"']])('charset=%s is UTF-8 and acknowledged', async (charset) => {
      await expectSameReply(
        { body: json(cardAdded()), headers: { 'content-type': `${JSON_TYPE}; charset=${charset}` } },
        { status: 200, body: { ResultCode: 0 } },
      );
    });
  });

  describe('encoded bodies get 415 naming the encoding', () => {
    const body = JSON.stringify(cardAdded());
    it.each([
      ['gzip', gzipSync(body)],
      ['deflate', deflateSync(body)],
      ['br', brotliCompressSync(body)],
      ['x-custom', Buffer.from(body)],
      ['gzip, identity', gzipSync(body)],
    ])('Content-Encoding: %s', async (encoding, encoded) => {
      await expectSameReply(
        { body: encoded, headers: { 'content-encoding': encoding } },
        unsupported(`unsupported content encoding "${encoding}"`),
      );
    });

    // Express's parser decodes gzip, deflate and br first: a corrupt one used to get its 400.
    it.each([['gzip'], ['deflate'], ['br']])(
      'Content-Encoding: %s on bytes that are not so encoded',
      async (encoding) => {
        await expectSameReply(
          { body: json(cardAdded()), headers: { 'content-encoding': encoding } },
          unsupported(`unsupported content encoding "${encoding}"`),
        );
      },
    );

    it('Content-Encoding: identity is no encoding', async () => {
      await expectSameReply(
        { body: json(cardAdded()), headers: { 'content-encoding': 'Identity' } },
        { status: 200, body: { ResultCode: 0 } },
      );
    });
  });

  describe('media types other than application/json get 415', () => {
    it.each([['text/plain'], ['application/problem+json'], ['application/x-www-form-urlencoded'], [undefined]])(
      'Content-Type: %s',
      async (contentType) => {
        await expectSameReply(
          { body: json(cardAdded()), headers: { 'content-type': contentType } },
          unsupported('Content-Type must be application/json'),
        );
      },
    );

    it('matches the media type in any case', async () => {
      await expectSameReply(
        { body: json(cardAdded()), headers: { 'content-type': 'Application/JSON' } },
        { status: 200, body: { ResultCode: 0 } },
      );
    });
  });

  it('answers an empty body with 400', async () => {
    await expectSameReply(
      { body: Buffer.alloc(0) },
      { status: 400, body: { statusCode: 400, message: 'The notification must be a JSON object' } },
    );
  });

  describe('keys that could replace a prototype get 400 and never reach a handler', () => {
    it.each([
      ['"__proto__":{"isAdmin":true}'],
      ['"extra":[{"deep":{"__proto__":{"isAdmin":true}}}]'],
      ['"constructor":{"prototype":{"isAdmin":true}}'],
    ])('%s', async (member) => {
      const { express, fastify } = await replies({ body: withMember(member) });
      // Fastify's parser refuses these keys itself, before the route, with its own message; the route refuses them
      // with the same status on Express, naming the key.
      for (const reply of [express, fastify]) {
        expect(reply.status).toBe(400);
        expect(reply.body).not.toBe(ACK);
        expect(reply.handled).toBe(0);
      }
      expect(JSON.parse(express.body)).toMatchObject({ statusCode: 400, message: 'Invalid notification' });
      expect(({} as { isAdmin?: unknown }).isAdmin).toBeUndefined();
    });

    it.each([
      ['shopper.__proto__', (text: string) => text.replace('"shopper":{', '"shopper":{"__proto__":{"isAdmin":true},')],
      [
        'paymentMethod.card[0].__proto__',
        (text: string) =>
          text
            .replace('PAYMENT_METHOD_ADDED', 'PAYMENT_METHOD_REMOVED')
            .replace(/"card":\{[^}]*\}/, '"card":[{"__proto__":{"isAdmin":true}}]'),
      ],
      [
        'paymentMethod.card.constructor.prototype',
        (text: string) => text.replace('"card":{', '"card":{"constructor":{"prototype":{}},'),
      ],
    ])('names %s on Express', async (field, edit) => {
      const { express, fastify } = await replies({ body: Buffer.from(edit(JSON.stringify(cardAdded()))) });
      expect(fastify.status).toBe(400);
      expect(express.status).toBe(400);
      expect(JSON.parse(express.body).errors).toEqual([
        { field, message: "must not be a key: it could replace an object's prototype" },
      ]);
      expect(express.handled + fastify.handled).toBe(0);
    });
  });
});
