import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import { PayoutRunsModule, type PayoutRunsOptions } from 'nestjs-payouts/payout-runs';
import { resolvePayoutRunsOptions } from '../../lib/payout-runs/payout-runs-options.js';

const connection = { host: '127.0.0.1', port: 6379, password: 'redis-password-5e7a' };
const rateLimit = { max: 50, durationMs: 1000 };

/** Boots an app that imports `module`, and resolves with the error its bootstrap failed with. */
async function bootstrapError(module: ReturnType<typeof PayoutRunsModule.forRoot>): Promise<unknown> {
  @Module({ imports: [module] })
  class AppModule {}
  try {
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    await app.close();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('PayoutRunsModule options', () => {
  it('splits the rate limit into small windows, each allowing its share, never more than the limit in all', () => {
    expect(resolvePayoutRunsOptions({ connection, rateLimit }).limiter).toEqual({ max: 5, duration: 100 });
    expect(resolvePayoutRunsOptions({ connection, rateLimit: { max: 15, durationMs: 1000 } }).limiter).toEqual({
      max: 1,
      duration: 67,
    });
    expect(resolvePayoutRunsOptions({ connection, rateLimit: { ...rateLimit, slices: 1 } }).limiter).toEqual({
      max: 50,
      duration: 1000,
    });
    expect(resolvePayoutRunsOptions({ connection, rateLimit: false })).toMatchObject({ rateLimited: false });
  });

  it('fills in the defaults', () => {
    expect(resolvePayoutRunsOptions({ connection, rateLimit })).toMatchObject({
      prefix: 'bull',
      concurrency: 10,
      dedupeWindowMs: 30 * 24 * 60 * 60 * 1000,
      attempts: 5,
      worker: true,
      enqueueTimeoutMs: 10_000,
      providerDedupesRequestId: false,
    });
  });

  it('reads a redis:// or rediss:// URL into connection options, as ioredis does', () => {
    expect(resolvePayoutRunsOptions({ connection: 'redis://127.0.0.1:6390', rateLimit }).connection).toEqual({
      host: '127.0.0.1',
      port: 6390,
    });
    expect(
      resolvePayoutRunsOptions({ connection: 'rediss://app:redis-password-5e7a@redis.internal/2', rateLimit })
        .connection,
    ).toEqual({ host: 'redis.internal', port: 6379, username: 'app', password: 'redis-password-5e7a', db: 2, tls: {} });
  });

  it('requires a hash-tagged prefix with a Redis Cluster connection', () => {
    // bullmq 5 (the Nest 11 leg) types connections with its own copy of ioredis; the app's client works all the same.
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      lazyConnect: true,
    }) as unknown as PayoutRunsOptions['connection'];

    expect(() => resolvePayoutRunsOptions({ connection: cluster, rateLimit })).toThrow(
      'PayoutRunsModule option "prefix" is missing: expected a prefix with a hash tag, such as "{payouts}", with a ' +
        'Redis Cluster connection: the keys of a queue must share a slot.',
    );
    expect(resolvePayoutRunsOptions({ connection: cluster, rateLimit, prefix: '{payouts}' }).prefix).toBe('{payouts}');
  });

  it.each([
    [
      { rateLimit },
      'connection',
      'a redis:// or rediss:// URL, Redis connection options such as { host, port }, or a client',
      'missing',
    ],
    [
      { rateLimit, connection: 'localhost:6379' },
      'connection',
      'a redis:// or rediss:// URL, Redis connection options such as { host, port }, or a client',
    ],
    [
      { rateLimit, connection: 'redis://u:redis-password-5e7a@127.0.0.1:6379/db' },
      'connection',
      'a redis:// or rediss:// URL, Redis connection options such as { host, port }, or a client',
    ],
    [{ connection }, 'rateLimit', '{ max, durationMs } as the provider allows, or false', 'missing'],
    [{ connection, rateLimit: { max: 0, durationMs: 1000 } }, 'rateLimit.max', 'a whole number from 1 to 1000000'],
    [
      { connection, rateLimit: { max: 5, duration: 1000 } },
      'rateLimit.duration',
      'a known option name (did you mean "durationMs"?)',
    ],
    [{ connection, rateLimit, prefix: 'a:b' }, 'prefix', 'a non-empty string without ":", such as "bull"'],
    [{ connection, rateLimit, account: 'e u' }, 'account', 'the name of a PayoutsModule registration'],
    [{ connection, rateLimit, attempts: 0 }, 'attempts', 'a whole number from 1 to 1000'],
    [{ connection, rateLimit, dedupeWindowMs: 10 }, 'dedupeWindowMs', 'a whole number from 1000 to 34560000000'],
    [{ connection, rateLimit, worker: 'yes' }, 'worker', 'true or false'],
    [{ connection, rateLimit, enqueueTimeoutMs: 0 }, 'enqueueTimeoutMs', 'a whole number from 1 to 600000'],
    [{ connection, rateLimit, enqueueTimeoutMs: 2.5 }, 'enqueueTimeoutMs', 'a whole number from 1 to 600000'],
    [
      { connection, rateLimit, providerDedupesRequestIds: true },
      'providerDedupesRequestIds',
      'a known option name (did you mean "providerDedupesRequestId"?)',
    ],
  ])(
    'refuses %j at bootstrap, naming the option and never its value',
    async (options, option, expected, state?: string) => {
      // As PayoutsModule: importing the module never throws, the app's bootstrap fails.
      const module = PayoutRunsModule.forRoot(options as unknown as PayoutRunsOptions);
      const thrown = await bootstrapError(module);
      expect(thrown).toBeInstanceOf(PayoutsConfigError);
      expect((thrown as Error).message).toBe(
        `PayoutRunsModule option "${option}" is ${state ?? 'invalid'}: expected ${expected}.`,
      );
      expect((thrown as Error).message).not.toContain('redis-password-5e7a');
    },
  );

  it('names every wrong option at once, a required one spelt otherwise as missing, and never a value', async () => {
    const options = {
      Connection: 'redis://u:redis-password-5e7a@127.0.0.1:6379',
      rateLimit: { max: 0, durationMs: 1000 },
      prefix: 'a:b',
      worker: 'yes',
      enqueueTimeoutMs: 2.5,
      progressIntervalMS: 500,
    };

    const thrown = await bootstrapError(PayoutRunsModule.forRoot(options as unknown as PayoutRunsOptions));

    expect(thrown).toBeInstanceOf(PayoutsConfigError);
    expect((thrown as PayoutsConfigError).option).toBe('connection');
    expect((thrown as Error).message).toBe(
      [
        'PayoutRunsModule has 6 invalid options:',
        '- "connection" is missing; you passed "Connection".',
        '- "prefix" is invalid: expected a non-empty string without ":", such as "bull".',
        '- "rateLimit.max" is invalid: expected a whole number from 1 to 1000000.',
        '- "worker" is invalid: expected true or false.',
        '- "enqueueTimeoutMs" is invalid: expected a whole number from 1 to 600000.',
        '- "progressIntervalMS" is invalid: expected a known option name (did you mean "progressIntervalMs"?).',
      ].join('\n'),
    );
    expect(JSON.stringify(thrown)).not.toContain('redis-password-5e7a');
  });

  it('checks forRootAsync at bootstrap too: its account, and a useFactory that is no function', async () => {
    const badAccount = PayoutRunsModule.forRootAsync({ account: 'e u', useFactory: () => ({ connection, rateLimit }) });
    expect(((await bootstrapError(badAccount)) as Error).message).toBe(
      'PayoutRunsModule option "account" is invalid: expected the name of a PayoutsModule registration.',
    );
    const noFactory = PayoutRunsModule.forRootAsync({ useFactory: 'options' as never });
    const thrown = await bootstrapError(noFactory);
    expect(thrown).toBeInstanceOf(PayoutsConfigError);
    expect((thrown as Error).message).toBe(
      'PayoutRunsModule option "useFactory" is invalid: expected a function returning the options.',
    );
  });
});
