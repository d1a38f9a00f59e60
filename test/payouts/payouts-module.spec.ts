import { Agent as HttpAgent } from 'node:http';
import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import { PayoutsError } from 'nestjs-payouts';
import { PayoutsModule } from 'nestjs-payouts';
import type { PayoutsModuleOptions, PayoutsOptionsFactory } from 'nestjs-payouts';
import { PayoutsService } from 'nestjs-payouts';
import { RecordingLogger } from '../recording-logger.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { ACCESS_TOKEN, API_KEY, payoutsOptions, startPayoutsApp, usePayoutsTestbed } from './payouts-test-app.js';

const CONFIG_API_KEY = 'config-api-key-93d1';
const CONFIG_TOKEN = 'config-token-6a2f';

/** Options read from @nestjs/config, as an app would read them from its environment. */
function configModule(baseUrl: string) {
  return ConfigModule.forRoot({
    ignoreEnvFile: true,
    load: [() => ({ PAYOUTS_BASE_URL: baseUrl, PAYOUTS_API_KEY: CONFIG_API_KEY, PAYOUTS_ACCESS_TOKEN: CONFIG_TOKEN })],
  });
}

function optionsFrom(config: ConfigService): PayoutsModuleOptions {
  return {
    baseUrl: config.getOrThrow<string>('PAYOUTS_BASE_URL'),
    apiKey: config.getOrThrow<string>('PAYOUTS_API_KEY'),
    accessToken: config.getOrThrow<string>('PAYOUTS_ACCESS_TOKEN'),
    notifications: false,
  };
}

@Injectable()
class PayoutsOptionsFromConfig implements PayoutsOptionsFactory {
  constructor(private readonly config: ConfigService) {}

  createPayoutsOptions(): PayoutsModuleOptions {
    return optionsFrom(this.config);
  }
}

describe('PayoutsModule registration', () => {
  const testbed = usePayoutsTestbed();

  async function expectCredentialsSent(apiKey: string, token: string): Promise<void> {
    await testbed.started!.payouts.createPayout(walletPayoutRequest());
    expect(testbed.stub.requests[0]!.headers).toMatchObject({ 'x-api-key': apiKey, authorization: `Bearer ${token}` });
  }

  it('forRoot', async () => {
    testbed.started = await startPayoutsApp(PayoutsModule.forRoot(payoutsOptions(testbed.stub.baseUrl)));
    await expectCredentialsSent(API_KEY, ACCESS_TOKEN);
  });

  it('forRootAsync with a factory that injects ConfigService', async () => {
    testbed.started = await startPayoutsApp(
      PayoutsModule.forRootAsync({
        imports: [configModule(testbed.stub.baseUrl)],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => optionsFrom(config),
      }),
    );
    await expectCredentialsSent(CONFIG_API_KEY, CONFIG_TOKEN);
  });

  it('forRootAsync with an async factory', async () => {
    testbed.started = await startPayoutsApp(
      PayoutsModule.forRootAsync({
        useFactory: async () => payoutsOptions(testbed.stub.baseUrl, { apiKey: 'async-key' }),
      }),
    );
    await expectCredentialsSent('async-key', ACCESS_TOKEN);
  });

  it('forRootAsync with useClass and createPayoutsOptions()', async () => {
    testbed.started = await startPayoutsApp(
      PayoutsModule.forRootAsync({ imports: [configModule(testbed.stub.baseUrl)], useClass: PayoutsOptionsFromConfig }),
    );
    await expectCredentialsSent(CONFIG_API_KEY, CONFIG_TOKEN);
  });

  describe('isGlobal', () => {
    @Controller('feature')
    class FeatureController {
      constructor(private readonly payouts: PayoutsService) {}

      @Get('payout')
      async payout(): Promise<unknown> {
        return (await this.payouts.createPayout(walletPayoutRequest('req_feature'))).body;
      }
    }

    @Module({ controllers: [FeatureController] })
    class FeatureModule {}

    it('lets a feature module inject PayoutsService without importing PayoutsModule', async () => {
      @Module({
        imports: [
          PayoutsModule.forRootAsync({
            isGlobal: true,
            imports: [configModule(testbed.stub.baseUrl)],
            inject: [ConfigService],
            useFactory: optionsFrom,
          }),
          FeatureModule,
        ],
      })
      class GlobalAppModule {}

      const app = await NestFactory.create(GlobalAppModule, { logger: false, abortOnError: false });
      try {
        await app.listen(0, '127.0.0.1');
        const response = await fetch(`${await app.getUrl()}/feature/payout`);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ id: 'po_123', status: 'pending' });
        expect(JSON.parse(testbed.stub.requests[0]!.body)).toMatchObject({ request_id: 'req_feature' });
      } finally {
        await app.close();
      }
    });

    it('is off by default', async () => {
      const compiling = Test.createTestingModule({
        imports: [PayoutsModule.forRoot(payoutsOptions(testbed.stub.baseUrl)), FeatureModule],
      }).compile();
      await expect(compiling).rejects.toThrow(/PayoutsService/);
    });
  });
});

describe('notifications: false', () => {
  const testbed = usePayoutsTestbed();

  it.each([
    ['forRoot', (baseUrl: string) => PayoutsModule.forRoot(payoutsOptions(baseUrl))],
    [
      'forRootAsync',
      (baseUrl: string) => PayoutsModule.forRootAsync({ useFactory: async () => payoutsOptions(baseUrl) }),
    ],
  ])('with %s, maps no notifications controller, and Nest logs none', async (_register, register) => {
    const logger = new RecordingLogger();
    testbed.started = await startPayoutsApp(register(testbed.stub.baseUrl), logger);

    const mapped = logger.messages('log').filter((line) => /\{\/|Mapped/.test(line));
    expect(mapped).toEqual(['MerchantPayoutsController {/merchant}:', 'Mapped {/merchant/payouts, POST} route']);
    expect(logger.lines.join('\n')).not.toContain('PayoutsNotificationsController');
    const response = await fetch(`${testbed.started.url}/`, { method: 'POST' });
    expect(response.status).toBe(404);
  });
});

describe('a baseUrl ending in /payouts', () => {
  const testbed = usePayoutsTestbed();
  const warning = (path: string) =>
    `baseUrl ends in /payouts, so payouts are sent to ${path}: ` +
    'baseUrl is the API root, without /payouts, unless your API really is mounted there.';

  it.each([
    ['forRoot', (baseUrl: string) => PayoutsModule.forRoot(payoutsOptions(baseUrl))],
    [
      'forRootAsync',
      (baseUrl: string) => PayoutsModule.forRootAsync({ useFactory: async () => payoutsOptions(baseUrl) }),
    ],
  ])('is warned of at bootstrap with %s, and the 404 names the doubled path', async (_register, register) => {
    testbed.stub.reply({ status: 404, body: { error: 'no such route' } });
    const logger = new RecordingLogger();
    testbed.started = await startPayoutsApp(register(`${testbed.stub.baseUrl}/v1/payouts/`), logger);

    expect(logger.messages('warn')).toEqual([warning('/v1/payouts/payouts')]);
    const error = await testbed.started.payouts.createPayout(walletPayoutRequest('req_404')).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'Payout request "req_404" (POST /v1/payouts/payouts) was rejected by the payouts API with HTTP 404.',
    );
  });

  it('is not warned of otherwise', async () => {
    const logger = new RecordingLogger();
    testbed.started = await startPayoutsApp(
      PayoutsModule.forRoot(payoutsOptions(`${testbed.stub.baseUrl}/v1/payout`)),
      logger,
    );

    expect(logger.messages('warn')).toEqual([]);
  });
});

describe('PayoutsModule options checked at bootstrap', () => {
  const SECRET = 'sk_live_do_not_print_8c1f';
  const bad: Array<[string, Partial<PayoutsModuleOptions> | Record<string, unknown>, string]> = [
    ['baseUrl missing', { baseUrl: undefined }, 'baseUrl'],
    ['baseUrl not a URL', { baseUrl: 'payouts.example.com' }, 'baseUrl'],
    ['baseUrl not http(s)', { baseUrl: 'ftp://payouts.example.com' }, 'baseUrl'],
    ['baseUrl with a query', { baseUrl: 'https://payouts.example.com/v1?key=1' }, 'baseUrl'],
    ['baseUrl with credentials', { baseUrl: `https://merchant:${SECRET}@payouts.example.com` }, 'baseUrl'],
    ['apiKey missing', { apiKey: undefined }, 'apiKey'],
    ['apiKey empty', { apiKey: '' }, 'apiKey'],
    ['apiKey with a trailing newline', { apiKey: `${SECRET}\n` }, 'apiKey'],
    ['apiKey with spaces', { apiKey: `key ${SECRET}` }, 'apiKey'],
    ['apiKey not a string', { apiKey: 12345 }, 'apiKey'],
    ['accessToken missing', { accessToken: undefined }, 'accessToken'],
    ['accessToken with the Bearer prefix', { accessToken: `Bearer ${SECRET}` }, 'accessToken'],
    ['accessToken not a string or function', { accessToken: { token: SECRET } }, 'accessToken'],
    ['timeoutMs zero', { timeoutMs: 0 }, 'timeoutMs'],
    ['timeoutMs a string', { timeoutMs: '30000' }, 'timeoutMs'],
    ['timeoutMs fractional', { timeoutMs: 1.5 }, 'timeoutMs'],
    ['maxResponseBytes zero', { maxResponseBytes: 0 }, 'maxResponseBytes'],
    ['maxResponseBytes a string', { maxResponseBytes: '1mb' }, 'maxResponseBytes'],
    [
      'headers setting the Authorization header',
      { headers: { Authorization: `Bearer ${SECRET}` } },
      'headers.authorization',
    ],
    ['headers setting X-API-Key', { headers: { 'X-API-Key': SECRET } }, 'headers.x-api-key'],
    ['headers setting X-API-Key spelt with underscores', { headers: { X_Api_Key: SECRET } }, 'headers.x_api_key'],
    [
      'headers setting Authorization spelt in capitals',
      { headers: { AUTHORIZATION: SECRET } },
      'headers.authorization',
    ],
    [
      'headers with a line break in a value',
      { headers: { 'x-tenant': `t1\r\nx-api-key: ${SECRET}` } },
      'headers.x-tenant',
    ],
    ['headers not an object', { headers: 'x-tenant: t1' }, 'headers'],
    ['maxRedirects turned on', { maxRedirects: 5 }, 'maxRedirects'],
    ['httpAgent not an agent', { httpAgent: { keepAlive: true } }, 'httpAgent'],
    ['httpsAgent not an https agent', { httpsAgent: new HttpAgent() }, 'httpsAgent'],
    ['proxy without a port', { proxy: { host: 'proxy.internal' } }, 'proxy.port'],
    [
      'proxy with a bad protocol',
      { proxy: { host: 'proxy.internal', port: 3128, protocol: 'socks5' } },
      'proxy.protocol',
    ],
    [
      'proxy auth without a password',
      { proxy: { host: 'proxy.internal', port: 3128, auth: { username: 'u' } } },
      'proxy.auth',
    ],
    ['retries negative', { retries: -1 }, 'retries.maxRetries'],
    ['retries a string', { retries: 'twice' }, 'retries'],
    ['retries.maxRetries fractional', { retries: { maxRetries: 1.5 } }, 'retries.maxRetries'],
    ['retries.baseDelayMs negative', { retries: { baseDelayMs: -10 } }, 'retries.baseDelayMs'],
    ['retries.maxDelayMs not a number', { retries: { maxDelayMs: '1s' } }, 'retries.maxDelayMs'],
    // Past 2^31 - 1 ms a timer fires after 1 ms: a long deadline or wait would become none at all.
    ['timeoutMs past what a timer can wait', { timeoutMs: 2_147_483_648 }, 'timeoutMs'],
    ['retries.maxDelayMs past what a timer can wait', { retries: { maxDelayMs: 2 ** 32 } }, 'retries.maxDelayMs'],
    ['retries.retryOnStatus with a 2xx', { retries: { retryOnStatus: [503, 200] } }, 'retries.retryOnStatus'],
  ];

  async function bootstrapError(compile: () => Promise<unknown>): Promise<PayoutsConfigError> {
    const error = await compile().then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    expect(error).toBeInstanceOf(PayoutsConfigError);
    expect(error).toBeInstanceOf(PayoutsError);
    return error as PayoutsConfigError;
  }

  it.each(bad)('forRoot fails compile() on %s, naming the option', async (_case, override, option) => {
    const options = { ...payoutsOptions('https://payouts.example.com'), ...override } as PayoutsModuleOptions;
    const error = await bootstrapError(() =>
      Test.createTestingModule({ imports: [PayoutsModule.forRoot(options)] }).compile(),
    );

    expect(error.option).toBe(option);
    expect(error.message).toMatch(
      new RegExp(`^PayoutsModule option "${option.replace('.', '\\.')}" is (invalid|missing): expected .+\\.$`),
    );
    // Absent reads as missing, present and wrong as invalid.
    expect(error.message.includes(' is missing: ')).toBe(_case.endsWith(' missing'));
    expect(error.message).not.toContain(SECRET);
    expect(JSON.stringify(error)).not.toContain(SECRET);
  });

  it.each(bad)('forRootAsync fails app creation on %s', async (_case, override, option) => {
    @Module({
      imports: [
        PayoutsModule.forRootAsync({
          useFactory: async () =>
            ({ ...payoutsOptions('https://payouts.example.com'), ...override }) as PayoutsModuleOptions,
        }),
      ],
    })
    class BadAppModule {}

    const error = await bootstrapError(() => NestFactory.create(BadAppModule, { logger: false, abortOnError: false }));

    expect(error.option).toBe(option);
    expect(error.message).not.toContain(SECRET);
  });

  it.each([
    [{ retry: 3 }, 'retry', 'a known option name (did you mean "retries"?)'],
    [{ baseURL: 'https://payouts.example.com' }, 'baseURL', 'a known option name (did you mean "baseUrl"?)'],
    [{ retries: { maxRetry: 1 } }, 'retries.maxRetry', 'a known option name (did you mean "maxRetries"?)'],
    [
      { notifications: { verification: 'none', bodyLimit: 10 } },
      'notifications.bodyLimit',
      'a known option name (did you mean "bodyLimitBytes"?)',
    ],
    [
      { notifications: { verification: { secret: { value: SECRET, queryParm: 't' } } } },
      'notifications.verification.secret.queryParm',
      'a known option name (did you mean "queryParam"?)',
    ],
    [
      { notifications: { verification: 'none', dedupe: { ttl: 1000 } } },
      'notifications.dedupe.ttl',
      'a known option name (did you mean "ttlMs"?)',
    ],
    [
      { webhookSecret: SECRET },
      'webhookSecret',
      'one of baseUrl, apiKey, accessToken, timeoutMs, maxResponseBytes, retries, httpAgent, httpsAgent, proxy, headers, notifications, telemetry',
    ],
  ])(
    'fails a forRootAsync factory that returns the unknown option in %j, naming the closest one',
    async (extra, option, expected) => {
      @Module({
        imports: [
          PayoutsModule.forRootAsync({
            useFactory: () => ({ ...payoutsOptions('https://payouts.example.com'), ...extra }) as PayoutsModuleOptions,
          }),
        ],
      })
      class TypoAppModule {}

      const error = await bootstrapError(() =>
        NestFactory.create(TypoAppModule, { logger: false, abortOnError: false }),
      );

      expect(error.option).toBe(option);
      expect(error.message).toBe(`PayoutsModule option "${option}" is invalid: expected ${expected}.`);
      expect(error.message).not.toContain(SECRET);
    },
  );

  const failedBootstrap = async (options: Record<string, unknown>) => {
    @Module({ imports: [PayoutsModule.forRootAsync({ useFactory: () => options as unknown as PayoutsModuleOptions })] })
    class MistakesAppModule {}
    return bootstrapError(() => NestFactory.create(MistakesAppModule, { logger: false, abortOnError: false }));
  };

  it('names a required option spelt otherwise as missing, with the key passed, and never its value', async () => {
    const { baseUrl: _baseUrl, apiKey: _apiKey, ...rest } = payoutsOptions('https://payouts.example.com');
    const error = await failedBootstrap({ ...rest, base_url: 'https://payouts.example.com', apikey: SECRET });

    expect(error.message).toBe(
      'PayoutsModule has 2 invalid options:\n' +
        '- "baseUrl" is missing; you passed "base_url".\n' +
        '- "apiKey" is missing; you passed "apikey".',
    );
    expect(error.option).toBe('baseUrl');
    expect(error.problems).toEqual([
      { option: 'baseUrl', problem: 'is missing; you passed "base_url"' },
      { option: 'apiKey', problem: 'is missing; you passed "apikey"' },
    ]);
    expect(JSON.stringify(error)).not.toContain(SECRET);
  });

  it('names one misspelt key in the one-line message, any case or separator', async () => {
    const { accessToken: _token, ...rest } = payoutsOptions('https://payouts.example.com');
    const error = await failedBootstrap({ ...rest, ACCESS_TOKEN: SECRET });

    expect(error.message).toBe('PayoutsModule option "accessToken" is missing; you passed "ACCESS_TOKEN".');
    expect(error.message).not.toContain(SECRET);
  });

  it('tells to drop the Bearer prefix of an access token, without repeating the token', async () => {
    const error = await failedBootstrap({
      ...payoutsOptions('https://payouts.example.com'),
      accessToken: `Bearer ${SECRET}`,
    });

    expect(error.message).toBe(
      'PayoutsModule option "accessToken" is invalid: expected the token alone: drop the "Bearer " in front of it, ' +
        'the client adds it to the Authorization header.',
    );
    expect(JSON.stringify(error)).not.toContain(SECRET);
  });

  it('reports every wrong option in one error, never a value', async () => {
    const error = await failedBootstrap({
      ...payoutsOptions('https://payouts.example.com'),
      apiKey: `key ${SECRET}`,
      timeoutMs: 0,
      retries: 'twice',
      timeout_ms: 5000,
      webhookSecret: SECRET,
    });

    expect(error.problems.map((problem) => problem.option)).toEqual([
      'apiKey',
      'timeoutMs',
      'retries',
      'timeout_ms',
      'webhookSecret',
    ]);
    expect(error.message.split('\n')).toEqual([
      'PayoutsModule has 5 invalid options:',
      '- "apiKey" is invalid: expected a non-empty string without spaces.',
      '- "timeoutMs" is invalid: expected a positive whole number of milliseconds up to 2147483647 (about 24 days).',
      '- "retries" is invalid: expected a number of retries or an object of retry options.',
      '- "timeout_ms" is invalid: expected a known option name (did you mean "timeoutMs"?).',
      '- "webhookSecret" is invalid: expected one of baseUrl, apiKey, accessToken, timeoutMs, maxResponseBytes, ' +
        'retries, httpAgent, httpsAgent, proxy, headers, notifications, telemetry.',
    ]);
    expect(JSON.stringify(error)).not.toContain(SECRET);
    expect(error.message).not.toContain(SECRET);
  });

  it('rejects missing options altogether', async () => {
    const error = await bootstrapError(() =>
      Test.createTestingModule({
        imports: [PayoutsModule.forRootAsync({ useFactory: () => undefined as unknown as PayoutsModuleOptions })],
      }).compile(),
    );
    expect(error.option).toBe('options');
  });
});
