import { afterEach, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import { type ForwardingProxy, startForwardingProxy } from './forwarding-proxy.js';
import {
  ADAPTERS,
  cardAdded,
  type NotificationsApp,
  type NotificationsAppOptions,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';

const PATH = 'payouts/notifications';
const SERVICE = '203.0.113.9';
const STRANGER = '198.51.100.7';

/*
 * allowedIps checks the framework's client address, which follows the app's trust-proxy setting. Behind a proxy the
 * app must trust that proxy's address (Express `app.set('trust proxy', 'loopback')`, Fastify
 * `new FastifyAdapter({ trustProxy: 'loopback' })`); what a client writes in X-Forwarded-For itself never counts.
 */
describe.each(ADAPTERS)('allowedIps behind a proxy on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let proxies: ForwardingProxy[] = [];

  afterEach(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    proxies = [];
    await running?.close();
    running = undefined;
  });

  async function start(trustProxy: NotificationsAppOptions['trustProxy']): Promise<NotificationsApp> {
    running = await startNotificationsApp({
      adapter,
      trustProxy,
      notifications: { verification: { allowedIps: [`${SERVICE}/32`] } },
      providers: [CardEvents],
    });
    return running;
  }

  async function proxyFor(clientAddress: string): Promise<ForwardingProxy> {
    const proxy = await startForwardingProxy(running!.url(''), clientAddress);
    proxies.push(proxy);
    return proxy;
  }

  const received = () => running!.app.get(CardEvents).received;

  it('accepts the service through a trusted proxy, and sees its address', async () => {
    await start('loopback');
    const reply = await post((await proxyFor(SERVICE)).url(PATH), cardAdded());
    expect(reply.status).toBe(200);
    expect(received().map((entry) => entry.context.ip)).toEqual([SERVICE]);
  });

  it('refuses another client through the trusted proxy, even when it claims the service address itself', async () => {
    await start('loopback');
    const proxy = await proxyFor(STRANGER);
    expect((await post(proxy.url(PATH), cardAdded())).status).toBe(401);
    expect((await post(proxy.url(PATH), cardAdded(), { headers: { 'x-forwarded-for': SERVICE } })).status).toBe(401);
    expect(received()).toEqual([]);
  });

  it("checks the proxy's own address when the app does not trust it, so the service is refused", async () => {
    await start(undefined);
    expect((await post((await proxyFor(SERVICE)).url(PATH), cardAdded())).status).toBe(401);
  });

  it('ignores a spoofed X-Forwarded-For from a direct client when trust proxy is off', async () => {
    await start(undefined);
    const reply = await post(running!.url(PATH), cardAdded(), { headers: { 'x-forwarded-for': SERVICE } });
    expect(reply.status).toBe(401);
    expect(received()).toEqual([]);
  });
});
