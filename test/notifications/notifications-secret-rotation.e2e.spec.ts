import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import type { NotificationsOptions, NotificationVerificationOptions } from 'nestjs-payouts';
import { deliver, paymentMethodAddedNotification } from 'nestjs-payouts/testing';
import { CardEvents } from './notification-handlers.fixture.js';
import {
  ADAPTERS,
  bootError,
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { resolveNotificationsConfig } from '../../lib/notifications/notifications-config.js';
import { accountOptions, registration, UNUSED_BASE_URL } from '../accounts/accounts-test-app.js';

const PATH = 'payouts/notifications';
const CURRENT = 'current-secret-3b8f0e6a91c24d57';
const PREVIOUS = 'previous-secret-a41c7e90d2f35b68';
const EXPIRED = 'expired-secret-7d2e91b04c6fa385';
const SHORT = 'short-9f2';
const ALL_SECRETS = [CURRENT, PREVIOUS, EXPIRED, SHORT];
const HEADER = 'x-notifications-token';
const UNAUTHORIZED = { statusCode: 401, message: 'Unauthorized' };

const rotation = (notAfter: Date) => [
  { value: CURRENT, label: '2026-11' },
  { value: PREVIOUS, label: '2026-05', notAfter },
];
const inAnHour = () => new Date(Date.now() + 60 * 60 * 1000);

/*
 * Rotating the notification secret: the route accepts every listed secret that has not passed its notAfter, so the
 * portal can move to the new one while re-sends still carry the old; it logs which label verified requests, warns
 * at boot about expired and short secrets, and never prints a value.
 */
describe.each(ADAPTERS.flatMap((adapter) => (['query', 'header'] as const).map((form) => [adapter, form] as const)))(
  'secret rotation on %s, secret in the %s',
  (adapter, form) => {
    let running: NotificationsApp | undefined;
    let logger: RecordingLogger;

    afterEach(async () => {
      await running?.close();
      running = undefined;
    });

    async function start(value: NonNullable<NotificationVerificationOptions['secret']>['value']) {
      logger = new RecordingLogger();
      running = await startNotificationsApp({
        adapter,
        logger,
        notifications: { verification: { secret: { value, ...(form === 'header' && { header: HEADER }) } } },
        providers: [CardEvents],
      });
      return running;
    }

    function send(secret: string | undefined, body: unknown = cardAdded()) {
      if (form === 'header') {
        return post(running!.url(PATH), body, { headers: { [HEADER]: secret } });
      }
      return post(running!.url(secret === undefined ? PATH : `${PATH}?token=${secret}`), body);
    }

    const where = form === 'header' ? `header ${HEADER}` : 'query parameter token';
    const handled = () => running!.app.get(CardEvents).received.length;

    function expectNoSecretLogged(): void {
      for (const line of logger.lines) {
        for (const secret of ALL_SECRETS) expect(line).not.toContain(secret);
      }
    }

    it('accepts the current and the previous secret, and logs which label verified requests', async () => {
      await start(rotation(inAnHour()));
      for (const secret of [CURRENT, PREVIOUS, CURRENT, PREVIOUS]) {
        expect((await send(secret)).body).toBe('{"ResultCode":0}');
      }
      expect(handled()).toBe(4);
      expect(logger.messages('log').filter((line) => line.startsWith('Notifications verified'))).toEqual([
        `Notifications verified with the secret 2026-11 (${where}): the first since the app started`,
        `Notifications verified with the secret 2026-05 (${where}): the first since the app started`,
      ]);
      expect(logger.messages('warn')).toEqual([]);
      expectNoSecretLogged();
    });

    it('refuses an expired secret with 401, naming its label in the log, and warns at boot', async () => {
      const expiredAt = new Date(Date.now() - 1000);
      await start([
        { value: CURRENT, label: '2026-11' },
        { value: EXPIRED, label: '2026-05', notAfter: expiredAt.toISOString() },
      ]);
      expect(logger.messages('warn')).toEqual([
        `notifications.verification.secret.value 2026-05 expired at ${expiredAt.toISOString()}: ` +
          'requests presenting it are refused with 401. Remove it from the list.',
      ]);
      const reply = await send(EXPIRED);
      expect(reply.status).toBe(401);
      expect(JSON.parse(reply.body)).toEqual(UNAUTHORIZED);
      expect(handled()).toBe(0);
      expect(logger.messages('warn').at(-1)).toMatch(
        new RegExp(
          `\\): the secret 2026-05 expired at ${expiredAt.toISOString().replaceAll('.', '\\.')} \\(${where}\\)$`,
        ),
      );
      expect((await send(CURRENT)).status).toBe(200);
      expectNoSecretLogged();
    });

    it('verifies a value listed twice, first past its notAfter (old), then without one (new), by the valid entry', async () => {
      const expiredAt = new Date(Date.now() - 1000);
      await start([
        { value: CURRENT, label: 'old', notAfter: expiredAt },
        { value: CURRENT, label: 'new' },
      ]);
      expect(logger.messages('warn')).toEqual([
        `notifications.verification.secret.value old expired at ${expiredAt.toISOString()}: ` +
          'its value is listed again as new, which verifies it. Remove it from the list.',
      ]);
      for (let sent = 0; sent < 2; sent++) expect((await send(CURRENT)).body).toBe('{"ResultCode":0}');
      expect(handled()).toBe(2);
      expect(logger.messages('log').filter((line) => line.startsWith('Notifications verified'))).toEqual([
        `Notifications verified with the secret new (${where}): the first since the app started`,
      ]);
      expect(logger.messages('warn')).toHaveLength(1);
      expectNoSecretLogged();
    });

    it('refuses a wrong or missing secret with 401', async () => {
      await start(rotation(inAnHour()));
      for (const secret of ['wrong-secret-0000000000000000', `${CURRENT}x`, CURRENT.slice(0, -1), undefined]) {
        const reply = await send(secret);
        expect(reply.status).toBe(401);
        expect(JSON.parse(reply.body)).toEqual(UNAUTHORIZED);
      }
      expect(handled()).toBe(0);
      expectNoSecretLogged();
    });

    it('warns at boot about a secret shorter than 16 bytes, by its label or option, never its value', async () => {
      await start([
        { value: CURRENT, label: '2026-11' },
        { value: SHORT, label: 'weak' },
      ]);
      expect(logger.messages('warn')).toEqual([
        expect.stringMatching(/^notifications\.verification\.secret\.value weak is shorter than 16 bytes/),
      ]);
      await running!.close();
      await start(SHORT);
      expect(logger.messages('warn')).toEqual([
        expect.stringMatching(/^notifications\.verification\.secret\.value is shorter than 16 bytes/),
      ]);
      expect((await send(SHORT)).status).toBe(200);
      expectNoSecretLogged();
    });

    it("keeps working across the service's re-sends: the simulator delivers with the old secret", async () => {
      await start(rotation(inAnHour()));
      const url =
        form === 'header' ? running!.url(PATH) : `${running!.url(PATH)}?token=${encodeURIComponent(PREVIOUS)}`;
      const report = await deliver(url, paymentMethodAddedNotification(), {
        attempts: 1,
        ...(form === 'header' && { headers: { [HEADER]: PREVIOUS } }),
      });
      expect(report.delivered).toBe(true);
      expect(handled()).toBe(1);
    });
  },
);

describe.each(ADAPTERS)('secret rotation of a named account on %s', (adapter) => {
  it("verifies the account's requests with each of its secrets", async () => {
    const logger = new RecordingLogger();
    const account = { name: 'eu', apiKey: 'eu-api-key-8c1f', secret: CURRENT, path: 'payouts/eu/notifications' };
    const notifications: NotificationsOptions = {
      path: account.path,
      verification: { secret: { value: rotation(inAnHour()), header: HEADER } },
    };
    const running = await startNotificationsApp({
      adapter,
      logger,
      imports: [registration('forRoot', { name: 'eu' }, accountOptions(account, UNUSED_BASE_URL, { notifications }))],
    });
    try {
      for (const secret of [CURRENT, PREVIOUS]) {
        const reply = await post(running.url(account.path), cardAdded(), { headers: { [HEADER]: secret } });
        expect(reply.body).toBe('{"ResultCode":0}');
      }
      const refused = await post(running.url(account.path), cardAdded(), { headers: { [HEADER]: EXPIRED } });
      expect(refused.status).toBe(401);
      expect(logger.messages('log')).toContainEqual(expect.stringContaining('verified with the secret 2026-05'));
    } finally {
      await running.close();
    }
  });
});

describe('secret list options at bootstrap', () => {
  const notAfterOf = (notAfter: string) => {
    const config = resolveNotificationsConfig({
      verification: { secret: { value: [{ value: CURRENT, label: 'a', notAfter }] } },
    });
    return config && config.verification !== 'none' && config.verification.secret?.values[0]?.notAfter;
  };

  it('accepts the last day of each month, 29 February of a leap year included', () => {
    for (const notAfter of ['2028-02-29T00:00:00Z', '2026-04-30T23:59:59Z', '2026-12-31T00:00:00-05:00']) {
      expect(notAfterOf(notAfter)).toBe(Date.parse(notAfter));
    }
    expect(notAfterOf('2000-02-29T00:00:00Z')).toBe(Date.UTC(2000, 1, 29));
  });

  it.each(['2026-02-30T00:00:00Z', '2026-04-31T00:00:00Z', '2026-06-31T00:00:00Z', '1900-02-29T00:00:00Z'])(
    'refuses %s, a day that does not exist, naming the option',
    (notAfter) => {
      expect(() => notAfterOf(notAfter)).toThrow(
        new PayoutsConfigError(
          'notifications.verification.secret.value[0].notAfter',
          'a Date, or an ISO 8601 date-time string of a day that exists, with its offset, such as "2026-12-01T00:00:00Z"',
        ),
      );
    },
  );

  it.each<[string, unknown]>([
    ['notifications.verification.secret.value', []],
    ['notifications.verification.secret.value[0]', [CURRENT]],
    ['notifications.verification.secret.value[0].label', [{ value: CURRENT }]],
    ['notifications.verification.secret.value[0].label', [{ value: CURRENT, label: 'has space' }]],
    [
      'notifications.verification.secret.value[1].label',
      [
        { value: CURRENT, label: 'a' },
        { value: PREVIOUS, label: 'a' },
      ],
    ],
    ['notifications.verification.secret.value[0].value', [{ value: '', label: 'a' }]],
    ['notifications.verification.secret.value[0].notAfter', [{ value: CURRENT, label: 'a', notAfter: 'soon' }]],
    [
      'notifications.verification.secret.value[0].notAfter',
      [{ value: CURRENT, label: 'a', notAfter: '2026-12-01T00:00:00' }],
    ],
    ['notifications.verification.secret.value[0].notAfter', [{ value: CURRENT, label: 'a', notAfter: new Date('x') }]],
    ...['2026-02-30T00:00:00Z', '2026-04-31T00:00:00Z', '2026-06-31T12:00:00+02:00', '2027-02-29T00:00:00Z'].map(
      (notAfter): [string, unknown] => [
        'notifications.verification.secret.value[1].notAfter',
        [
          { value: CURRENT, label: 'a' },
          { value: PREVIOUS, label: 'b', notAfter },
        ],
      ],
    ),
    [
      'notifications.verification.secret.value[0].notafter',
      [{ value: CURRENT, label: 'a', notafter: '2026-12-01T00:00:00Z' }],
    ],
  ])('names %s, never a secret', async (option, value) => {
    const error = await bootError({
      adapter: 'express',
      notifications: { verification: { secret: { value } } } as NotificationsOptions,
    });
    expect(error).toBeInstanceOf(PayoutsConfigError);
    expect((error as PayoutsConfigError).option).toBe(option);
    for (const rendering of [(error as Error).message, JSON.stringify(error), inspect(error)]) {
      for (const secret of ALL_SECRETS) expect(rendering).not.toContain(secret);
    }
  });
});
