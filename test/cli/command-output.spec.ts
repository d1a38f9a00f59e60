import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import { InvalidArgument } from '../../lib/common/command-line.js';
import {
  commandLineSecretsHidden,
  type CommandOutput,
  runCommand,
  terminalOutput,
} from '../../lib/common/command-output.js';

function recordingOutput(): CommandOutput & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (line) => lines.push(`out: ${line}`), err: (line) => lines.push(`err: ${line}`) };
}

describe('the output of the command line', () => {
  it('escapes every control character of every line it writes, keeping the line breaks of a text', () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const output = terminalOutput(stdout, stderr);

    output.out('Usage:\n  \u001b]0;pwned\u0007x\u009b31m\u202e');
    output.err('Error: \r\u001b[2J');

    expect(stdout.read().toString()).toBe('Usage:\n  \\u001b]0;pwned\\u0007x\\u009b31m\\u202e\n');
    expect(stderr.read().toString()).toBe('Error: \\r\\u001b[2J\n');
  });

  describe('runCommand()', () => {
    const args = ['unknown', '--redis-url', 'redis://ops:pa55word-1@127.0.0.1:1', '--note=n0te-secret'];
    const env = { REDIS_URL: 'redis://:env-pa55@127.0.0.1:1', PAYOUTS_API_KEY: 'sk_env_key_7' };
    const hide = commandLineSecretsHidden(args, env);

    it('exits 2 with the message of a bad option, and the way to the help', async () => {
      const bad = recordingOutput();
      const config = recordingOutput();

      const badCode = await runCommand('queue', () => Promise.reject(new InvalidArgument('--limit is bad')), bad, hide);
      const configCode = await runCommand(
        'payout-runs',
        () => Promise.reject(new PayoutsConfigError('prefix', 'a prefix', 'PayoutRunsModule')),
        config,
        hide,
      );

      expect([badCode, bad.lines]).toEqual([
        2,
        ['err: Error: --limit is bad', 'err: Run "nestjs-payouts queue --help" for the options.'],
      ]);
      expect([configCode, config.lines]).toEqual([
        2,
        [
          'err: Error: PayoutRunsModule option "prefix" is invalid: expected a prefix.',
          'err: Run "nestjs-payouts payout-runs --help" for the options.',
        ],
      ]);
    });

    it('exits 70 for any other error, with no stack and no value of the command line or credential of the environment', async () => {
      const output = recordingOutput();
      const leaky = new TypeError(
        'cannot use redis://ops:pa55word-1@127.0.0.1:1 (pa55word-1, n0te-secret, env-pa55, sk_env_key_7, unknown)',
      );

      const code = await runCommand('payout-runs', () => Promise.reject(leaky), output, hide);

      expect([code, output.lines]).toEqual([
        70,
        [
          'err: Error: nestjs-payouts payout-runs failed unexpectedly (TypeError: cannot use [redacted] ' +
            '([redacted], [redacted], [redacted], [redacted], [redacted])). Please report it.',
        ],
      ]);
    });

    it('resolves with what the command resolves with', async () => {
      const output = recordingOutput();

      expect(await runCommand('simulate', () => Promise.resolve(1), output, hide)).toBe(1);
      expect(output.lines).toEqual([]);
    });
  });
});
