import { inspect } from 'node:util';
import { Injectable, Scope } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { NotificationHandlerScopeError } from 'nestjs-payouts';
import { PayoutsConfigError } from 'nestjs-payouts';
import { OnPaymentMethodAdded } from 'nestjs-payouts';
import type { NotificationClaim, NotificationDedupeStore } from 'nestjs-payouts';
import type { NotificationsOptions } from 'nestjs-payouts';
import { AuditTrail, CardEvents } from './notification-handlers.fixture.js';
import {
  ADAPTERS,
  bootError,
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const SECRET = 'boot-secret-value-never-printed';

@Injectable({ scope: Scope.REQUEST })
class RequestScopedEvents {
  @OnPaymentMethodAdded()
  added(): void {}
}

@Injectable({ scope: Scope.TRANSIENT })
class TransientEvents {
  @OnPaymentMethodAdded()
  added(): void {}
}

describe('notifications configuration errors at bootstrap', () => {
  it('requires verification when notifications are omitted, and says what to add', async () => {
    const error = await bootError({ adapter: 'express' });
    expect(error).toBeInstanceOf(PayoutsConfigError);
    expect((error as PayoutsConfigError).option).toBe('notifications.verification');
    expect((error as Error).message).toContain('verification: { secret: { value:');
    expect((error as Error).message).toContain('notifications: false');
  });

  it('requires verification in forRootAsync too', async () => {
    const error = await bootError({ adapter: 'fastify', async: true, notifications: {} as NotificationsOptions });
    expect((error as PayoutsConfigError).option).toBe('notifications.verification');
  });

  it.each<[string, unknown]>([
    ['notifications.verification', {}],
    ['notifications.verification', 'off'],
    ['notifications.verification.secret.value', { secret: { value: '' } }],
    ['notifications.verification.secret', { secret: { value: SECRET, queryParam: 'a', header: 'x-a' } }],
    ['notifications.verification.secret.header', { secret: { value: SECRET, header: 'bad header' } }],
    ['notifications.verification.allowedIps', { allowedIps: [] }],
    ['notifications.verification.allowedIps[1]', { allowedIps: ['10.0.0.1', '10.0.0.300'] }],
    ['notifications.verification.allowedIps[0]', { allowedIps: ['10.0.0.0/33'] }],
    ['notifications.verification.allowedIps[0]', { allowedIps: ['::1/129'] }],
    ['notifications.verification.verify', { verify: true }],
  ])('names %s', async (option, verification) => {
    const error = await bootError({
      adapter: 'express',
      notifications: { verification } as NotificationsOptions,
    });
    expect(error).toBeInstanceOf(PayoutsConfigError);
    expect((error as PayoutsConfigError).option).toBe(option);
    for (const rendering of [(error as Error).message, JSON.stringify(error), inspect(error)]) {
      expect(rendering).not.toContain(SECRET);
    }
  });

  it.each<[string, Partial<NotificationsOptions>]>([
    ['notifications.path', { path: '' }],
    ['notifications.path', { path: 'a?b' }],
    ['notifications.path', { path: 'payouts/:x/notifications' }],
    ['notifications.path', { path: '*' }],
    ['notifications.path', { path: '{*splat}' }],
    ['notifications.path', { path: 'payouts/*rest' }],
    ['notifications.path', { path: 'payouts{/:id}' }],
    ['notifications.path', { path: 'payouts/(.*)' }],
    ['notifications.bodyLimitBytes', { bodyLimitBytes: 0 }],
    ['notifications.handlerTimeoutMs', { handlerTimeoutMs: 0 }],
    ['notifications.handlerTimeoutMs', { handlerTimeoutMs: 2.5 }],
    ['notifications.handlerTimeoutMs', { handlerTimeoutMs: 2 ** 31 }],
    ['notifications.dedupe', { dedupe: { store: {} as NotificationDedupeStore, ttlMs: 5 } }],
    ['notifications.dedupe.store', { dedupe: { store: {} as NotificationDedupeStore } }],
    ['notifications.dedupe.ttlMs', { dedupe: { ttlMs: -5 } }],
    ['notifications.dedupe.maxEntries', { dedupe: { maxEntries: 0.5 } }],
    ['notifications.controllerDecorators', { controllerDecorators: ['Public'] as unknown as ClassDecorator[] }],
  ])('names %s', async (option, notifications) => {
    const error = await bootError({ adapter: 'express', notifications: { verification: 'none', ...notifications } });
    expect((error as PayoutsConfigError).option).toBe(option);
  });

  it.each([
    ['request-scoped', RequestScopedEvents],
    ['transient', TransientEvents],
  ])('refuses a handler on a %s provider, naming it', async (_scope, handlerClass) => {
    const error = await bootError({
      adapter: 'express',
      notifications: { verification: 'none' },
      providers: [handlerClass],
    });
    expect(error).toBeInstanceOf(NotificationHandlerScopeError);
    expect((error as Error).message).toContain(`${handlerClass.name}.added`);
  });
});

describe.each(ADAPTERS)('notifications bootstrap on %s', (adapter) => {
  let running: NotificationsApp | undefined;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('logs the handlers found and warns for each event type without one', async () => {
    const logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      notifications: { verification: 'none' },
      providers: [CardEvents],
    });
    expect(logger.messages('log')).toContainEqual('PAYMENT_METHOD_ADDED notifications go to CardEvents.added');
    expect(logger.messages('log')).toContainEqual('PAYMENT_METHOD_REMOVED notifications go to CardEvents.removed');
    expect(logger.messages('warn').filter((line) => line.startsWith('No handler for'))).toEqual([]);
  });

  it('warns for each known event type when no handler exists, and lists catch-all handlers', async () => {
    const logger = new RecordingLogger();
    running = await startNotificationsApp({ adapter, logger, notifications: { verification: 'none' } });
    const warnings = logger.messages('warn');
    expect(warnings).toContainEqual(expect.stringContaining('No handler for PAYMENT_METHOD_ADDED notifications'));
    expect(warnings).toContainEqual(expect.stringContaining('No handler for PAYMENT_METHOD_REMOVED notifications'));
    await running.close();

    const withCatchAll = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger: withCatchAll,
      notifications: { verification: 'none' },
      providers: [AuditTrail],
    });
    expect(withCatchAll.messages('log')).toContainEqual('Notifications of any other type go to AuditTrail.record');
    expect(withCatchAll.messages('warn').filter((line) => line.startsWith('No handler for'))).toEqual([]);
  });

  it('applies dedupe.maxEntries to the built-in store', async () => {
    running = await startNotificationsApp({
      adapter,
      notifications: { verification: 'none', dedupe: { maxEntries: 1 } },
      providers: [CardEvents],
    });
    const first = cardAdded();
    const url = running.url('payouts/notifications');
    expect((await post(url, first)).status).toBe(200);
    expect((await post(url, first)).status).toBe(200);
    expect((await post(url, cardAdded())).status).toBe(200);
    expect((await post(url, first)).status).toBe(200);
    expect(running.app.get(CardEvents).received).toHaveLength(3);
  });

  it('uses a plugged-in store, and answers 500 without running handlers when it fails', async () => {
    const calls: string[] = [];
    let failing = false;
    const store: NotificationDedupeStore = {
      async claim(key): Promise<NotificationClaim> {
        calls.push(`claim ${key}`);
        if (failing) throw new Error('store offline');
        return 'claimed';
      },
      async complete(key) {
        calls.push(`complete ${key}`);
      },
      async release(key) {
        calls.push(`release ${key}`);
      },
    };
    running = await startNotificationsApp({
      adapter,
      notifications: { verification: 'none', dedupe: { store } },
      providers: [CardEvents],
    });
    const url = running.url('payouts/notifications');
    expect((await post(url, cardAdded())).status).toBe(200);
    const key = running.app.get(CardEvents).received[0]!.context.dedupeKey;
    expect(calls).toEqual([`claim ${key}`, `complete ${key}`]);
    failing = true;
    expect((await post(url, cardAdded())).status).toBe(500);
    expect(running.app.get(CardEvents).received).toHaveLength(1);
  });

  it("gives each delivery its own claim id, passed to that delivery's claim and its complete or release", async () => {
    const calls: [string, string | undefined][] = [];
    const store: NotificationDedupeStore = {
      claim: async (_key, claimId): Promise<NotificationClaim> => {
        calls.push(['claim', claimId]);
        return 'claimed';
      },
      complete: async (_key, claimId) => void calls.push(['complete', claimId]),
      release: async (_key, claimId) => void calls.push(['release', claimId]),
    };
    running = await startNotificationsApp({
      adapter,
      notifications: { verification: 'none', dedupe: { store } },
      providers: [CardEvents],
    });
    const url = running.url('payouts/notifications');
    const notification = cardAdded();
    expect((await post(url, notification)).status).toBe(200);
    running.app.get(CardEvents).behaviour = () => {
      throw new Error('handler failed');
    };
    expect((await post(url, notification)).status).toBe(500);

    expect(calls.map(([call]) => call)).toEqual(['claim', 'complete', 'claim', 'release']);
    const [first, completed, second, released] = calls.map(([, claimId]) => claimId);
    // The dispatcher's random prefix (96 bits, base64url) and a count of its deliveries.
    expect(first).toMatch(/^[\w-]{16}\.[0-9a-z]+$/);
    expect(completed).toBe(first);
    expect(second).toMatch(/^[\w-]{16}\.[0-9a-z]+$/);
    expect(second).not.toBe(first);
    expect(second!.split('.')[0]).toBe(first!.split('.')[0]);
    expect(released).toBe(second);

    // Another instance sharing the store draws its own prefix, so its deliveries' ids never meet these.
    const other = await startNotificationsApp({
      adapter,
      notifications: { verification: 'none', dedupe: { store } },
      providers: [CardEvents],
    });
    try {
      expect((await post(other.url('payouts/notifications'), cardAdded())).status).toBe(200);
    } finally {
      await other.close();
    }
    const [, otherId] = calls.at(-1)!;
    expect(otherId).toMatch(/^[\w-]{16}\.1$/);
    expect(otherId!.split('.')[0]).not.toBe(first!.split('.')[0]);
  });

  it('takes the answers of an asynchronous store: handled is acknowledged, in progress is 409', async () => {
    let answer: NotificationClaim = 'handled';
    const store: NotificationDedupeStore = {
      claim: async () => answer,
      complete: async () => {},
      release: async () => {},
    };
    running = await startNotificationsApp({
      adapter,
      notifications: { verification: 'none', dedupe: { store } },
      providers: [CardEvents],
    });
    const url = running.url('payouts/notifications');
    const acknowledged = await post(url, cardAdded());
    expect([acknowledged.status, acknowledged.body]).toEqual([200, '{"ResultCode":0}']);
    answer = 'in-progress';
    expect((await post(url, cardAdded())).status).toBe(409);
    expect(running.app.get(CardEvents).received).toHaveLength(0);
  });

  it('works with a synchronous store, whose throws are a 500 on claim and a logged ack on complete', async () => {
    const logger = new RecordingLogger();
    const calls: string[] = [];
    let failing: 'claim' | 'complete' | undefined;
    const store: NotificationDedupeStore = {
      claim(key) {
        calls.push(`claim ${key}`);
        if (failing === 'claim') throw new Error('store offline');
        return 'claimed';
      },
      complete(key) {
        calls.push(`complete ${key}`);
        if (failing === 'complete') throw new Error('store offline');
      },
      release(key) {
        calls.push(`release ${key}`);
      },
    };
    running = await startNotificationsApp({
      adapter,
      logger,
      notifications: { verification: 'none', dedupe: { store } },
      providers: [CardEvents],
    });
    const url = running.url('payouts/notifications');
    // The same notification each time: this store remembers nothing, so every delivery is claimed.
    const notification = cardAdded();
    expect((await post(url, notification)).status).toBe(200);
    const key = running.app.get(CardEvents).received[0]!.context.dedupeKey;
    expect(calls).toEqual([`claim ${key}`, `complete ${key}`]);

    failing = 'claim';
    expect((await post(url, notification)).status).toBe(500);
    expect(running.app.get(CardEvents).received).toHaveLength(1);
    expect(logger.messages('error')).toContainEqual(
      `The dedupe store failed to claim notification ${key}; not acknowledged`,
    );

    failing = 'complete';
    expect((await post(url, notification)).status).toBe(200);
    expect(running.app.get(CardEvents).received).toHaveLength(2);
    expect(logger.messages('error')).toContainEqual(`The dedupe store failed to record notification ${key} as handled`);
  });
});
