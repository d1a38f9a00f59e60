import { afterEach, describe, expect, it } from 'vitest';
import type { NotificationRequestInfo, NotificationsOptions } from 'nestjs-payouts';
import { CardEvents } from './notification-handlers.fixture.js';
import {
  ADAPTERS,
  cardAdded,
  type NotificationsApp,
  type NotificationsAppOptions,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const SECRET = 's3cr3t-notification-token-0123456789';
const PATH = 'payouts/notifications';

describe.each(ADAPTERS)('notification verification on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(
    verification: NotificationsOptions['verification'],
    extra: Partial<NotificationsAppOptions> = {},
  ): Promise<NotificationsApp> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      notifications: { verification },
      providers: [CardEvents],
      ...extra,
    });
    return running;
  }

  const handled = () => running!.app.get(CardEvents).received.length;

  async function expectRefused(url: string, body: unknown = cardAdded(), headers?: Record<string, string>) {
    const before = handled();
    const reply = await post(url, body, { headers });
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.body)).toEqual({ statusCode: 401, message: 'Unauthorized' });
    expect(reply.body).not.toContain(SECRET);
    expect(handled()).toBe(before);
  }

  describe('secret', () => {
    it('accepts the secret in the default token query parameter', async () => {
      const app = await start({ secret: { value: SECRET } });
      const reply = await post(app.url(`${PATH}?token=${encodeURIComponent(SECRET)}`), cardAdded());
      expect(reply.status).toBe(200);
      expect(handled()).toBe(1);
    });

    it('refuses a wrong, shorter, longer, repeated or missing token', async () => {
      const app = await start({ secret: { value: SECRET } });
      await expectRefused(app.url(`${PATH}?token=wrong`));
      await expectRefused(app.url(`${PATH}?token=${SECRET.slice(0, -1)}`));
      await expectRefused(app.url(`${PATH}?token=${SECRET}x`));
      await expectRefused(app.url(`${PATH}?token=${SECRET}&token=${SECRET}`));
      await expectRefused(app.url(PATH));
      // Longer in UTF-8 bytes by one multi-byte character, and equal in bytes but not in value.
      await expectRefused(app.url(`${PATH}?token=${encodeURIComponent(`${SECRET}€`)}`));
      await expectRefused(app.url(`${PATH}?token=${encodeURIComponent(`${SECRET.slice(0, -3)}€`)}`));
      await expectRefused(app.url(`${PATH}?token=${SECRET.slice(0, -1)}%FF`));
      expect((await post(app.url(`${PATH}?token=${SECRET}`), cardAdded())).status).toBe(200);
    });

    it('checks verification before validation: an invalid body from an unknown caller gets 401', async () => {
      const app = await start({ secret: { value: SECRET } });
      await expectRefused(app.url(PATH), { eventType: 42 });
      await expectRefused(app.url(PATH), '[]');
    });

    it('reads a custom query parameter', async () => {
      const app = await start({ secret: { value: SECRET, queryParam: 'key' } });
      expect((await post(app.url(`${PATH}?key=${SECRET}`), cardAdded())).status).toBe(200);
      await expectRefused(app.url(`${PATH}?token=${SECRET}`));
    });

    it('reads a header instead of the query string', async () => {
      const app = await start({ secret: { value: SECRET, header: 'X-Notifications-Token' } });
      const reply = await post(app.url(PATH), cardAdded(), { headers: { 'x-notifications-token': SECRET } });
      expect(reply.status).toBe(200);
      await expectRefused(app.url(`${PATH}?token=${SECRET}`));
      await expectRefused(app.url(PATH), cardAdded(), { 'x-notifications-token': 'nope' });
    });
  });

  describe('allowedIps', () => {
    it('accepts a listed address and a listed range, refuses others', async () => {
      const app = await start({ allowedIps: ['127.0.0.1'] });
      expect((await post(app.url(PATH), cardAdded())).status).toBe(200);
      await running!.close();
      const ranged = await start({ allowedIps: ['10.0.0.0/8', '127.0.0.0/30'] });
      expect((await post(ranged.url(PATH), cardAdded())).status).toBe(200);
      await running!.close();
      const other = await start({ allowedIps: ['203.0.113.0/24', '::1'] });
      await expectRefused(other.url(PATH));
    });

    it('matches IPv6 clients (the app listens on ::1)', async () => {
      const app = await start({ allowedIps: ['::1/128'] }, { host: '::1' });
      expect((await post(app.url(PATH), cardAdded())).status).toBe(200);
      expect(running!.app.get(CardEvents).received[0]!.context.ip).toBe('::1');
      await running!.close();
      const refused = await start({ allowedIps: ['2001:db8::/32', '127.0.0.1'] }, { host: '::1' });
      await expectRefused(refused.url(PATH));
    });

    it('uses the forwarded client address when the app trusts its proxy', async () => {
      const app = await start({ allowedIps: ['203.0.113.0/24'] }, { trustProxy: true });
      const reply = await post(app.url(PATH), cardAdded(), { headers: { 'x-forwarded-for': '203.0.113.9' } });
      expect(reply.status).toBe(200);
      expect(running!.app.get(CardEvents).received[0]!.context.ip).toBe('203.0.113.9');
      await expectRefused(app.url(PATH), cardAdded(), { 'x-forwarded-for': '198.51.100.1' });
    });

    it('matches an IPv4-mapped IPv6 client address against IPv4 rules', async () => {
      const app = await start({ allowedIps: ['203.0.113.0/24'] }, { trustProxy: true });
      const reply = await post(app.url(PATH), cardAdded(), { headers: { 'x-forwarded-for': '::ffff:203.0.113.9' } });
      expect(reply.status).toBe(200);
    });

    it('ignores forwarding headers when the app does not trust a proxy', async () => {
      const app = await start({ allowedIps: ['203.0.113.0/24'] });
      await expectRefused(app.url(PATH), cardAdded(), { 'x-forwarded-for': '203.0.113.9' });
    });
  });

  describe('verify', () => {
    it('passes the request details to a synchronous verify function', async () => {
      const seen: NotificationRequestInfo[] = [];
      const app = await start(
        {
          verify: (request) => {
            seen.push(request);
            return request.headers['x-signature'] === 'good';
          },
        },
        { rawBody: true },
      );
      const body = JSON.stringify(cardAdded());
      expect((await post(app.url(`${PATH}?a=1`), body, { headers: { 'x-signature': 'good' } })).status).toBe(200);
      await expectRefused(app.url(PATH), cardAdded(), { 'x-signature': 'bad' });
      expect(seen[0]!.rawBody?.toString('utf8')).toBe(body);
      expect(seen[0]!.query.a).toBe('1');
      expect(seen[0]!.ip).toBe('127.0.0.1');
    });

    it('awaits an asynchronous verify function', async () => {
      const app = await start({ verify: async (request) => request.headers['x-signature'] === 'good' });
      expect((await post(app.url(PATH), cardAdded(), { headers: { 'x-signature': 'good' } })).status).toBe(200);
      await expectRefused(app.url(PATH));
    });

    it('refuses and logs when verify throws or rejects', async () => {
      const app = await start({
        verify: (request) => {
          if (request.headers['x-mode'] === 'reject') return Promise.reject(new Error('key service down'));
          throw new Error('bad signature format');
        },
      });
      await expectRefused(app.url(PATH));
      await expectRefused(app.url(PATH), cardAdded(), { 'x-mode': 'reject' });
      expect(logger.messages('error').filter((line) => line.includes('verify function failed'))).toHaveLength(2);
    });
  });

  it('requires every configured check to pass', async () => {
    const app = await start({ secret: { value: SECRET }, allowedIps: ['127.0.0.1'], verify: () => true });
    expect((await post(app.url(`${PATH}?token=${SECRET}`), cardAdded())).status).toBe(200);
    await expectRefused(app.url(PATH));
    await running!.close();
    const blocked = await start({ secret: { value: SECRET }, allowedIps: ['203.0.113.1'] });
    await expectRefused(blocked.url(`${PATH}?token=${SECRET}`));
    await running!.close();
    const vetoed = await start({ secret: { value: SECRET }, verify: () => false });
    await expectRefused(vetoed.url(`${PATH}?token=${SECRET}`));
  });

  it("accepts any caller with 'none' and warns at bootstrap", async () => {
    const app = await start('none');
    expect((await post(app.url(PATH), cardAdded())).status).toBe(200);
    expect(logger.messages('warn')).toContainEqual(expect.stringContaining("verification is 'none'"));
  });

  it('never logs the secret', async () => {
    const app = await start({ secret: { value: SECRET } });
    await post(app.url(`${PATH}?token=wrong`), cardAdded());
    await post(app.url(`${PATH}?token=${SECRET}`), cardAdded());
    expect(logger.lines.some((line) => line.includes(SECRET))).toBe(false);
  });
});
