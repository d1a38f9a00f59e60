import { describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import { payoutsQueue, type PayoutsQueueOptions } from 'nestjs-payouts/queue';

const connection = { host: '127.0.0.1', port: 6379, password: 'redis-password-91c2' };

describe('payoutsQueue() options', () => {
  it('says whether the instance serves the route', () => {
    expect(payoutsQueue({ connection }).route).toBe(true);
    expect(payoutsQueue({ connection, route: false }).route).toBe(false);
  });

  it('takes a redis:// URL for connection, as ioredis does', () => {
    expect(payoutsQueue({ connection: 'redis://:redis-password-91c2@127.0.0.1:6390/3' }).route).toBe(true);
  });

  it.each([
    [{}, 'connection', 'a redis:// or rediss:// URL, Redis connection options such as { host, port }, or a client'],
    [
      { connection: 'http://u:redis-password-91c2@127.0.0.1:6379' },
      'connection',
      'a redis:// or rediss:// URL, Redis connection options such as { host, port }, or a client',
    ],
    [{ connection, queueName: 'a:b' }, 'queueName', 'up to 100 letters, digits, "-", "_" or "."'],
    [{ connection, prefix: '' }, 'prefix', 'a non-empty string such as "bull"'],
    [
      { connection, route: false, worker: false },
      'route',
      'route, worker or both left true: an instance must do one of them',
    ],
    [{ connection, attempts: 0 }, 'attempts', 'a whole number from 1 to 1000'],
    [{ connection, backoffMs: 1.5 }, 'backoffMs', 'a whole number from 1 to 86400000'],
    [{ connection, retentionMs: 500 }, 'retentionMs', 'a whole number of at least 1000'],
    [{ connection, enqueueTimeoutMs: '2000' }, 'enqueueTimeoutMs', 'a whole number from 1 to 60000'],
    [{ connection, lockDurationMs: 10 }, 'lockDurationMs', 'a whole number from 100 to 600000'],
    [{ connection, atempts: 3 }, 'atempts', 'a known option name (did you mean "attempts"?)'],
  ])('refuses %j, naming the option and never its value', (options, option, expected) => {
    let thrown: unknown;
    try {
      payoutsQueue(options as unknown as PayoutsQueueOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PayoutsConfigError);
    expect((thrown as PayoutsConfigError).message).toBe(
      `payoutsQueue option "${option}" is invalid: expected ${expected}.`,
    );
    expect((thrown as Error).message).not.toContain('redis-password-91c2');
  });
});
