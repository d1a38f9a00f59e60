import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationJobId } from 'nestjs-payouts/queue';
import { runCli } from '../cli/run-cli.js';
import { cardAdded, post } from '../notifications/notifications-test-app.js';
import { refusingPort } from '../payouts/payouts-api-stub.js';
import { RecordingLogger } from '../recording-logger.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { ACK, type QueueApp, startQueueApp, dedupeKeyOf } from './queue-test-app.js';

const PASSWORD = 'cli-redis-password-5d1e';

describeWithRedis('nestjs-payouts queue (a real process against a real Redis)', () => {
  let redis: RedisServer;
  let app: QueueApp;
  let url: string;
  let where: string;
  let broken = true;
  const failing = [cardAdded(), cardAdded()];

  beforeAll(async () => {
    redis = await RedisServer.start({ args: ['--requirepass', PASSWORD] });
    url = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
    app = await startQueueApp(
      'express',
      redis,
      { connection: { host: '127.0.0.1', port: redis.port, password: PASSWORD }, attempts: 1 },
      { logger: new RecordingLogger() },
    );
    where = `queue ${app.queue.name} at 127.0.0.1:${redis.port}`;
    app.events.behaviour = () => {
      if (broken) throw new Error('the ledger is read-only');
    };
    // One after the other: BullMQ orders failed jobs by the millisecond they failed in, and two failing in the same
    // one would be listed in the order of their ids.
    for (const [index, notification] of failing.entries()) {
      const reply = await post(app.route, notification);
      if (reply.body !== ACK) throw new Error(`the route answered ${reply.status} ${reply.body}`);
      await eventually(
        async () => ((await app.queue.getFailedCount()) === index + 1 ? true : undefined),
        10_000,
        `notification ${index + 1} fails`,
      );
    }
  });
  afterAll(async () => {
    await app?.close();
    await redis?.close();
  });

  const queueCli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(['queue', ...args], 15_000, env);
  const completed = (notification: Record<string, unknown>) =>
    eventually(
      async () =>
        (await app.queue.getJob(notificationJobId(dedupeKeyOf(notification))))?.finishedOn ? true : undefined,
      10_000,
      'the replayed job completes',
    );

  it('lists the failed notifications, newest first, without the password', async () => {
    const run = await queueCli(['failed', '--redis-url', url, '--queue', app.queue.name]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [heading, ...rows] = run.stdout.trimEnd().split('\n');
    expect(heading).toBe(`2 failed notifications in ${where}`);
    expect(rows).toEqual(
      failing
        .toReversed()
        .map((notification) =>
          expect.stringMatching(
            new RegExp(
              `^${notificationJobId(dedupeKeyOf(notification))}  PAYMENT_METHOD_ADDED  ${dedupeKeyOf(notification).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}` +
                `  1 attempt  failed \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  Handler failure on notification .*: QueuedEvents\\.handle: the ledger is read-only$`,
            ),
          ),
        ),
    );
    expect(run.stdout).not.toContain(PASSWORD);
  });

  it('limits the list, and reads the URL from REDIS_URL', async () => {
    const run = await queueCli(['failed', '--queue', app.queue.name, '--limit', '1'], { REDIS_URL: url });

    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(`2 failed notifications in ${where}, the newest 1 shown`);
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('replays one failed notification, which a worker then handles, and then all the others', async () => {
    broken = false;
    const [first, second] = failing as [Record<string, unknown>, Record<string, unknown>];
    const jobId = notificationJobId(dedupeKeyOf(first));

    const one = await queueCli(['replay', '--job', jobId, '--queue', app.queue.name], { REDIS_URL: url });
    expect([one.code, one.stdout]).toEqual([0, `Replayed job ${jobId} of ${where}\n`]);
    await completed(first);

    const again = await queueCli(['replay', '--job', jobId, '--queue', app.queue.name], { REDIS_URL: url });
    expect([again.code, again.stderr]).toEqual([
      1,
      `Error: job ${jobId} of ${where} was not replayed: it is not in the failed set.\n`,
    ]);

    const all = await queueCli(['replay', '--all', '--queue', app.queue.name], { REDIS_URL: url });
    expect([all.code, all.stdout]).toEqual([0, `Replayed 1 failed notification of ${where}\n`]);
    await completed(second);
    expect(await app.queue.getFailedCount()).toBe(0);
  });

  it("names an account's queue after the account", async () => {
    const run = await queueCli(['failed', '--redis-url', url, '--account', 'eu']);

    expect([run.code, run.stdout]).toEqual([
      0,
      `0 failed notifications in queue payouts-notifications-eu at 127.0.0.1:${redis.port}\n`,
    ]);
  });

  it('exits 2 when Redis refuses the password or cannot be reached, and never prints the password', async () => {
    const wrong = await queueCli(['failed', '--redis-url', `redis://:wrong-password-77@127.0.0.1:${redis.port}`]);
    const port = await refusingPort();
    const unreachable = await queueCli([
      'failed',
      '--redis-url',
      `redis://:${PASSWORD}@127.0.0.1:${port}`,
      '--timeout-ms',
      '1000',
    ]);

    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /^Error: cannot reach Redis for queue payouts-notifications at 127\.0\.0\.1:\d+ \(.+\)\.\n$/,
    );
    expect(wrong.stderr).not.toContain('wrong-password-77');
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain(
      `Error: cannot reach Redis for queue payouts-notifications at 127.0.0.1:${port}`,
    );
    expect(`${unreachable.stdout}${unreachable.stderr}`).not.toContain(PASSWORD);
  });

  describe('exits 2 for a bad command line', () => {
    it.each([
      [['failed'], '--redis-url is required (or the REDIS_URL environment variable)'],
      [['failed', '--redis-url', 'http://user:pw-9a7b@example.com'], '--redis-url must be a redis:// or rediss:// URL'],
      [['failed', 'redis://user:pw-9a7b@example.com'], 'unexpected argument #2 (not shown: it may be a secret)'],
      [['replay', '--redis-url', 'redis://127.0.0.1:1'], 'replay takes either --job <id> or --all'],
      [
        ['replay', '--redis-url', 'redis://127.0.0.1:1', '--job', 'a', '--all'],
        'replay takes either --job <id> or --all',
      ],
      [['failed', '--redis-url', 'redis://127.0.0.1:1', '--account', 'eu', '--queue', 'q'], '--account and --queue'],
      [
        ['drop', '--redis-url', 'redis://127.0.0.1:1'],
        'unknown command at argument #1 (not shown: it may be a secret); expected failed or replay',
      ],
      [[], 'a command is required: failed or replay'],
      [
        ['failed', '--redis-url', 'redis://127.0.0.1:1', '--limit', '0'],
        '--limit must be a whole number of at least 1',
      ],
    ])('%j', async (args, message) => {
      const run = await queueCli(args, { REDIS_URL: '' });

      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`Error: ${message}`);
      expect(run.stderr).toContain('Run "nestjs-payouts queue --help" for the options.');
      expect(run.stderr).not.toContain('pw-9a7b');
    });
  });

  it('prints its options with --help', async () => {
    const run = await queueCli(['--help']);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: nestjs-payouts queue <failed|replay> [options]');
  });
});

describeWithRedis('nestjs-payouts queue failed, on job data written by a sender and a handler', () => {
  let redis: RedisServer;
  let app: QueueApp;
  beforeAll(async () => {
    redis = await RedisServer.start();
    app = await startQueueApp('express', redis, { attempts: 1 }, { logger: new RecordingLogger() });
  });
  afterAll(async () => {
    await app?.close();
    await redis?.close();
  });

  it('escapes every control character of the event type and the failure reason, one line per notification', async () => {
    const hostile = '\u001b[2J\u0007A\r\nFORGED\u009b31m\u2028\u2029\u202e\u2066\u007f';
    const escaped = '\\u001b[2J\\u0007A\\r\\nFORGED\\u009b31m\\u2028\\u2029\\u202e\\u2066\\u007f';
    app.events.behaviour = () => {
      throw new Error(`ledger ${hostile}`);
    };
    const notification = cardAdded({ eventType: `EVT${hostile}` });
    expect((await post(app.route, notification)).body).toBe(ACK);
    await eventually(async () => ((await app.queue.getFailedCount()) === 1 ? true : undefined), 10_000, 'it fails');

    const run = await runCli(['queue', 'failed', '--redis-url', redis.url, '--queue', app.queue.name], 15_000);

    expect([run.code, run.stderr]).toEqual([0, '']);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`  EVT${escaped}  `);
    // The reason is cut at 200 characters, before its controls are escaped.
    expect(lines[1]).toContain(': QueuedEvents.handle: ledger \\u001b[2J\\u0007A\\r\\nFORGED\\u009b31m');
    // oxlint-disable-next-line no-control-regex -- the characters that must not reach the terminal
    expect(lines.join('')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
  });
});
