import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

const SECRET = 'S3cret-value-4f1c';
const HELP = (command: string) => `Run "nestjs-payouts ${command} --help" for the options.\n`;
// oxlint-disable-next-line no-control-regex -- the characters that must not reach the terminal
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
/** An OSC that retitles the terminal window, a CSI that recolours, and a BEL. */
const HOSTILE = '\u001b]0;pwned\u0007\u001b[31m\u0007';
const HOSTILE_ESCAPED = '\\u001b]0;pwned\\u0007\\u001b[31m\\u0007';
/** Without credentials in the environment, so that what a test passes is all the command reads. */
const NO_ENV = { REDIS_URL: '', PAYOUTS_API_KEY: '', PAYOUTS_ACCESS_TOKEN: '' };

const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, 15_000, { ...NO_ENV, ...env });

describe('the command line of every nestjs-payouts command (real processes)', () => {
  describe('never shows an argument given where an option name was forgotten: it may be a secret', () => {
    it.each([
      [
        ['simulate', `http://127.0.0.1:1/hooks?token=${SECRET}`],
        'unexpected argument #1 (not shown: it may be a secret); it looks like a URL: give it with --url',
      ],
      [
        ['queue', 'failed', `redis://:${SECRET}@127.0.0.1:1`],
        'unexpected argument #2 (not shown: it may be a secret); it looks like a URL: give it with --redis-url',
      ],
      [
        ['queue', `redis://:${SECRET}@127.0.0.1:1`, 'failed'],
        'unknown command at argument #1 (not shown: it may be a secret); expected failed or replay',
      ],
      [
        ['payout-runs', 'unknown', '--limit', '5', `redis://:${SECRET}@127.0.0.1:1`],
        'unexpected argument #4 (not shown: it may be a secret); it looks like a URL: give it with --redis-url',
      ],
      [['mock-api', `sk_live_${SECRET}`], 'unexpected argument #1 (not shown: it may be a secret)'],
      [['mock-api', `--apikey=${SECRET}`], 'unknown option --apikey; did you mean --api-key?'],
      [
        ['queue', 'faild', '--redis-url', 'redis://127.0.0.1:1'],
        'unknown command at argument #1 (not shown: it may be a secret); did you mean failed?',
      ],
    ])('%j', async (args, message) => {
      const run = await cli(args);

      expect([run.code, run.stdout, run.stderr]).toEqual([2, '', `Error: ${message}\n${HELP(args[0]!)}`]);
    });

    it('nor a word that is not a command', async () => {
      const secret = await cli([`sk_live_${SECRET}`]);
      const typo = await cli(['simulat', '--url', 'http://127.0.0.1:1/']);

      expect([secret.code, secret.stdout]).toEqual([2, '']);
      expect(secret.stderr.split('\n').slice(0, 2)).toEqual([
        'Error: unknown command (not shown: it may be a secret).',
        'Usage: nestjs-payouts <command> [options]',
      ]);
      expect(secret.stderr).not.toContain(SECRET);
      expect([typo.code, typo.stderr.split('\n')[0]]).toEqual([
        2,
        'Error: unknown command (not shown: it may be a secret); did you mean simulate?',
      ]);
    });
  });

  describe('escapes every value it echoes: OSC, CSI and BEL never reach the terminal', () => {
    it.each([
      [
        ['simulate', '--url', 'http://127.0.0.1:1/', '--event', HOSTILE],
        `--event must be added, removed, or an event type in capitals such as PAYMENT_METHOD_ADDED; got "${HOSTILE_ESCAPED}"`,
      ],
      [
        ['simulate', '--url', 'http://127.0.0.1:1/', '--overrides', `/nonexistent/${HOSTILE}.json`],
        `cannot read the --overrides file "/nonexistent/${HOSTILE_ESCAPED}.json" (ENOENT)`,
      ],
      [['simulate', '--url', 'http://127.0.0.1:1/', `--${HOSTILE}`], `unknown option "--${HOSTILE_ESCAPED}"`],
      [
        ['queue', 'failed', '--redis-url', 'redis://127.0.0.1:1', '--queue', `q${HOSTILE}`],
        '--queue must be up to 100 letters, digits, "-", "_" or "."',
      ],
    ])('%j', async (args, message) => {
      const run = await cli(args);

      expect([run.code, run.stdout, run.stderr]).toEqual([2, '', `Error: ${message}\n${HELP(args[0]!)}`]);
    });

    it('in the error of an unknown command', async () => {
      const run = await cli([HOSTILE]);

      expect(run.code).toBe(2);
      expect(run.stderr.split('\n')[0]).toBe('Error: unknown command (not shown: it may be a secret).');
      expect(run.stderr).not.toMatch(CONTROLS);
    });
  });

  describe('exits 2, with no stack trace, for an option the module itself would refuse', () => {
    it.each([
      [
        ['payout-runs', 'unknown', '--prefix', 'a:b'],
        '--prefix must be a non-empty string without ":", such as "bull"',
      ],
      [['payout-runs', 'unknown', '--prefix='], '--prefix must be a non-empty string without ":", such as "bull"'],
      [
        ['payout-runs', 'unknown', '--account', 'bad name'],
        '--account must be up to 64 letters, digits, "-", "_" or ".", starting with a letter or digit, such as "eu" or "merchant-42"',
      ],
      [['queue', 'failed', '--prefix='], '--prefix must be a non-empty string such as "bull"'],
      [['queue', 'failed', '--queue', 'a:b'], '--queue must be up to 100 letters, digits, "-", "_" or "."'],
      [
        ['queue', 'failed', '--account', 'bad name'],
        '--account must be up to 64 letters, digits, "-", "_" or ".", starting with a letter or digit, such as "eu" or "merchant-42"',
      ],
    ])('%j', async (args, message) => {
      const run = await cli([...args, '--redis-url', 'redis://127.0.0.1:1']);

      expect([run.code, run.stdout, run.stderr]).toEqual([2, '', `Error: ${message}\n${HELP(args[0]!)}`]);
    });
  });

  describe('refuses a wait longer than a timer keeps (2^31 - 1 ms), which would fire after 1 ms', () => {
    const TOO_LONG = '2147483648';
    it.each([
      [
        ['simulate', '--url', 'http://127.0.0.1:1/', '--timeout-ms', TOO_LONG],
        '--timeout-ms',
        'a positive whole number of',
      ],
      [
        ['simulate', '--url', 'http://127.0.0.1:1/', '--interval-ms', TOO_LONG],
        '--interval-ms',
        'a whole number, 0 or more, of',
      ],
      [
        ['queue', 'failed', '--redis-url', 'redis://127.0.0.1:1', '--timeout-ms', TOO_LONG],
        '--timeout-ms',
        'a positive whole number of',
      ],
      [
        ['payout-runs', 'unknown', '--redis-url', 'redis://127.0.0.1:1', '--timeout-ms', TOO_LONG],
        '--timeout-ms',
        'a positive whole number of',
      ],
      [['mock-api', '--port', '0', '--latency-ms', TOO_LONG], '--latency-ms', 'a whole number, 0 or more, of'],
    ])('%j', async (args, option, whole) => {
      const run = await cli(args);

      expect([run.code, run.stdout, run.stderr]).toEqual([
        2,
        '',
        `Error: ${option} must be ${whole} milliseconds up to 2147483647 (about 24 days); got ${TOO_LONG}\n${HELP(args[0]!)}`,
      ]);
    });

    it('and takes the longest one', async () => {
      const run = await cli(['queue', 'failed', '--redis-url', 'redis://127.0.0.1:1', '--timeout-ms', '2147483647']);

      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^Error: cannot reach Redis for queue payouts-notifications at 127\.0\.0\.1:1 \(/);
    });
  });

  describe('names where a bad Redis URL came from, never showing it', () => {
    it('the REDIS_URL environment variable', async () => {
      const run = await cli(['payout-runs', 'unknown'], { REDIS_URL: `http://ops:${SECRET}@127.0.0.1:1` });

      expect([run.code, run.stderr]).toEqual([
        2,
        'Error: the REDIS_URL environment variable (read as --redis-url is not given) must be a redis:// or rediss:// URL ' +
          `such as redis://:<password>@localhost:6379 (the value is not shown)\n${HELP('payout-runs')}`,
      ]);
    });

    it.each([`redis://:${SECRET}%ZZ@127.0.0.1:1`, 'redis://', 'redis:///0'])(
      'a password that is not valid percent-encoding, or no host: %j',
      async (redisUrl) => {
        const run = await cli(['payout-runs', 'unknown', '--redis-url', redisUrl]);

        expect([run.code, run.stdout, run.stderr]).toEqual([
          2,
          '',
          'Error: --redis-url must be a redis:// or rediss:// URL such as redis://:<password>@localhost:6379 ' +
            `(the value is not shown)\n${HELP('payout-runs')}`,
        ]);
      },
    );

    it('--redis-url, which wins over REDIS_URL', async () => {
      const run = await cli(['queue', 'failed', '--redis-url', `http://ops:${SECRET}@127.0.0.1:1`], {
        REDIS_URL: 'redis://127.0.0.1:1',
      });

      expect([run.code, run.stderr]).toEqual([
        2,
        'Error: --redis-url must be a redis:// or rediss:// URL such as redis://:<password>@localhost:6379 ' +
          `(the value is not shown)\n${HELP('queue')}`,
      ]);
    });
  });

  it.each([
    [['simulate', '--url'], '--url needs a value'],
    [['simulate', '--url', '--event', 'added'], '--url needs a value (give one that starts with "-" as --url=<value>)'],
    [['simulate', '--help=yes'], '--help takes no value'],
    [['queue', '--redis-url', 'redis://127.0.0.1:1'], 'a command is required: failed or replay'],
  ])('says what is wrong with an option: %j', async (args, message) => {
    const run = await cli(args);

    expect([run.code, run.stdout, run.stderr]).toEqual([2, '', `Error: ${message}\n${HELP(args[0]!)}`]);
  });
});
