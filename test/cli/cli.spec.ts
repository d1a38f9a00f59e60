import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ACK, type ScriptedReceiver, startScriptedReceiver, unusedLocalUrl } from '../simulator/scripted-receiver.js';
import { runCli } from './run-cli.js';

const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/.source;

describe('nestjs-payouts simulate (against a node:http receiver)', () => {
  let receiver: ScriptedReceiver | undefined;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nestjs-payouts-cli-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('exits 0 when the first attempt is acknowledged, and hides the secret in its output', async () => {
    receiver = await startScriptedReceiver([ACK]);

    const run = await runCli(['simulate', '--url', `${receiver.origin}/payouts/notifications?token=s3cret-value`]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        [
          `^Sending PAYMENT_METHOD_ADDED to ${receiver.origin}/payouts/notifications\\?token=redacted \\(up to 4 attempts, 5 min apart\\)`,
          `Attempt 1 at ${TIMESTAMP}: HTTP 200 \\{"ResultCode":0\\} -> acknowledged`,
          'Delivered on attempt 1\\.\n$',
        ].join('\n'),
      ),
    );
    expect(run.stdout).not.toContain('s3cret-value');
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]?.url).toBe('/payouts/notifications?token=s3cret-value');
    expect(JSON.parse(receiver.requests[0]?.body ?? '')).toMatchObject({
      eventType: 'PAYMENT_METHOD_ADDED',
      shopper: { id: 'shp_7Qk2Lm9Xr4' },
      paymentMethod: { id: 'pmt_3Vb8Hs1Ty6', type: 'card' },
    });
  });

  it('hides the secret when the reply echoes it, from the query string or from a header', async () => {
    const echo =
      '{"message":"Cannot POST /payouts/notificatio?token=s3cret%20value","statusCode":404,"x-secret":"h3ader-secret"}';
    receiver = await startScriptedReceiver([{ status: 404, body: echo }]);

    const run = await runCli([
      'simulate',
      '--url',
      `${receiver.origin}/payouts/notificatio?token=s3cret%20value`,
      '--header',
      'x-notifications-token: h3ader-secret',
      '--attempts',
      '1',
    ]);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      'HTTP 404 {"message":"Cannot POST /payouts/notificatio?token=redacted","statusCode":404,"x-secret":"redacted"}',
    );
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/s3cret|h3ader-secret/);
    expect(receiver.requests[0]?.headers['x-notifications-token']).toBe('h3ader-secret');
  });

  it('hides a query part without "=" and the user name and password of the URL, also where a reply echoes them', async () => {
    receiver = await startScriptedReceiver([
      { status: 404, body: 'no route for /hooks?K3y-only-secret (ops, pa55-word)' },
    ]);
    const url = `http://ops:pa55-word@${receiver.origin.slice('http://'.length)}/hooks?K3y-only-secret`;

    const run = await runCli(['simulate', '--url', url, '--attempts', '1']);

    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[0]).toBe(
      `Sending PAYMENT_METHOD_ADDED to ${receiver.origin}/hooks?redacted (one attempt)`,
    );
    expect(run.stdout).toContain('HTTP 404 no route for /hooks?redacted (ops, redacted) -> not acknowledged');
    expect(run.stdout + run.stderr).not.toMatch(/K3y-only-secret|pa55-word/);
    expect(receiver.requests[0]?.url).toBe('/hooks?K3y-only-secret');
  });

  it('re-sends after a rejected reply and exits 0 once acknowledged', async () => {
    receiver = await startScriptedReceiver([{ status: 401, body: '{"message":"Unauthorized","statusCode":401}' }, ACK]);

    const run = await runCli(['simulate', '--url', receiver.origin, '--interval-ms', '5']);

    expect(run.code).toBe(0);
    expect(run.stdout.split('\n').slice(1)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Attempt 1 at ${TIMESTAMP}: HTTP 401 \\{"message":"Unauthorized","statusCode":401\\} -> not acknowledged: ` +
            'replied with status 401; expected status 200 with the JSON body \\{"ResultCode":0\\}$',
        ),
      ),
      'Next attempt in 5 ms.',
      expect.stringMatching(new RegExp(`^Attempt 2 at ${TIMESTAMP}: HTTP 200 \\{"ResultCode":0\\} -> acknowledged$`)),
      'Delivered on attempt 2.',
      '',
    ]);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1]?.body).toBe(receiver.requests[0]?.body);
  });

  it("escapes the control characters of a receiver's reply, one line per attempt", async () => {
    const hostile = '\u001b[2J\u0007line\r\nFORGED\u009b31m\u2028\u202eevil\u007f';
    receiver = await startScriptedReceiver([{ status: 200, body: `{"ResultCode":"${hostile}"}` }]);

    const run = await runCli(['simulate', '--url', receiver.origin, '--attempts', '1']);

    expect(run.code).toBe(1);
    const escaped = '\\u001b[2J\\u0007line\\r\\nFORGED\\u009b31m\\u2028\\u202eevil\\u007f';
    expect(run.stdout).toContain(
      `HTTP 200 {"ResultCode":"${escaped}"} -> not acknowledged: replied with a body that is not JSON`,
    );
    // oxlint-disable-next-line no-control-regex -- the characters that must not reach the terminal
    expect(run.stdout.replaceAll('\n', '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202e]/);
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(3);
  });

  it('exits 1 when no attempt is acknowledged, saying the technical contact would be alerted', async () => {
    receiver = await startScriptedReceiver([{ status: 200, body: 'OK' }]);

    const run = await runCli(['simulate', '--url', receiver.origin, '--attempts', '3', '--interval-ms', '1']);

    expect(run.code).toBe(1);
    expect(run.stdout.match(/-> not acknowledged: replied with a body that is not JSON/g)).toHaveLength(3);
    expect(run.stdout).toContain(
      "Not delivered after 3 attempts: the payouts service would now e-mail the merchant's technical contact.\n",
    );
    expect(receiver.requests).toHaveLength(3);
  });

  it('sends the chosen event with the overrides file merged in and the extra headers', async () => {
    receiver = await startScriptedReceiver([ACK]);
    const overrides = join(dir, 'overrides.json');
    await writeFile(
      overrides,
      JSON.stringify({ shopper: { email: 'ada@example.com' }, paymentMethod: { card: { lastFour: '0005' } } }),
    );

    const run = await runCli([
      'simulate',
      '--url',
      receiver.origin,
      '--event',
      'removed',
      '--overrides',
      overrides,
      '--header',
      'X-Notification-Secret: hidden-value',
    ]);

    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('hidden-value');
    const request = receiver.requests[0];
    expect(request?.headers['x-notification-secret']).toBe('hidden-value');
    expect(JSON.parse(request?.body ?? '')).toMatchObject({
      eventType: 'PAYMENT_METHOD_REMOVED',
      shopper: { id: 'shp_7Qk2Lm9Xr4', email: 'ada@example.com' },
      paymentMethod: { card: { lastFour: '0005', expirationMonth: '08' } },
    });
  });

  it('sends any event type given in capitals', async () => {
    receiver = await startScriptedReceiver([ACK]);

    const run = await runCli(['simulate', '--url', receiver.origin, '--event', 'PAYMENT_METHOD_EXPIRED']);

    expect(run.code).toBe(0);
    expect(JSON.parse(receiver.requests[0]?.body ?? '').eventType).toBe('PAYMENT_METHOD_EXPIRED');
  });

  it('exits 2 at once when nothing listens at the URL', async () => {
    const url = await unusedLocalUrl();

    const run = await runCli(['simulate', '--url', `${url}?token=s3cret-value`]);

    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(
      /Attempt 1 at .*: no reply -> not acknowledged: cannot reach the host \(ECONNREFUSED\)\n$/,
    );
    expect(run.stdout).not.toContain('Attempt 2');
    expect(run.stderr).toBe(
      `Error: cannot reach the host (ECONNREFUSED) at ${url}?token=redacted. Is the application running, and are the host and port right?\n`,
    );
  });

  it.each([
    [['simulate'], '--url is required'],
    [
      ['simulate', '--url', 'localhost:3000/hooks'],
      '--url must be an absolute http:// or https:// URL; got "localhost:3000/hooks"',
    ],
    [
      ['simulate', '--url', 'ftp://example.com/'],
      '--url must be an absolute http:// or https:// URL; got "ftp://example.com/"',
    ],
    [['simulate', '--url', 'http://127.0.0.1/', '--retries', '3'], 'unknown option --retries'],
    [['simulate', '--url', 'http://127.0.0.1/', 'extra'], 'unexpected argument #3 (not shown: it may be a secret)'],
    [
      ['simulate', '--url', 'http://127.0.0.1/', '--attempts', '0'],
      '--attempts must be a whole number of at least 1; got 0',
    ],
    [
      ['simulate', '--url', 'http://127.0.0.1/', '--interval-ms', '1e3'],
      '--interval-ms must be a whole number, 0 or more, of milliseconds up to 2147483647 (about 24 days); got 1e3',
    ],
    [
      ['simulate', '--url', 'http://127.0.0.1/', '--timeout-ms=-5'],
      '--timeout-ms must be a positive whole number of milliseconds up to 2147483647 (about 24 days); got -5',
    ],
    [
      ['simulate', '--url', 'http://127.0.0.1/', '--event', 'add'],
      '--event must be added, removed, or an event type in capitals such as PAYMENT_METHOD_ADDED; got add',
    ],
    [['simulate', '--url', 'http://127.0.0.1/', '--header', 'no-colon'], '--header must look like "Name: value"'],
    [
      ['simulate', '--url', 'http://127.0.0.1/', '--overrides', '/nonexistent/overrides.json'],
      'cannot read the --overrides file /nonexistent/overrides.json (ENOENT)',
    ],
  ])('exits 2 for %j', async (args, message) => {
    const run = await runCli(args);

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`Error: ${message}`);
    expect(run.stderr).toContain('Run "nestjs-payouts simulate --help" for the options.');
  });

  it.each([
    ['{"shopper": ', 'is not valid JSON'],
    ['[1, 2]', 'must contain a JSON object'],
    ['null', 'must contain a JSON object'],
  ])('exits 2 for an overrides file containing %j', async (content, problem) => {
    const file = join(dir, 'bad.json');
    await writeFile(file, content);

    const run = await runCli(['simulate', '--url', 'http://127.0.0.1/', '--overrides', file]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`Error: the --overrides file ${file} ${problem}`);
  });

  it('prints the options with --help and exits 0', async () => {
    const run = await runCli(['simulate', '--help']);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: nestjs-payouts simulate --url <url> [options]');
    expect(run.stdout).toContain('--interval-ms <n>');
  });

  it('exits 2 for an unknown command, which it does not show', async () => {
    const run = await runCli(['deliver']);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Error: unknown command (not shown: it may be a secret).\n');
    expect(run.stderr).not.toContain('deliver');
  });

  describe('never shows the secret of a URL it refuses', () => {
    it.each([
      ['ftp://127.0.0.1:9/p?token=S3cret-value', 'got "ftp://127.0.0.1:9/p?token=redacted"'],
      [
        'htp:/127.0.0.1:3000/hooks?token=S3cret-value&x#S3cret-value',
        'got "htp:/127.0.0.1:3000/hooks?token=redacted&redacted#redacted"',
      ],
      ['http//127.0.0.1:3000/hooks?token=S3cret-value', 'the value given is no URL (not shown: it may hold a secret)'],
      [
        'https://ops:S3cret-value@127.0.0.1:99999/?token=S3cret-value',
        'the value given is no URL (not shown: it may hold a secret)',
      ],
    ])('%j', async (url, shown) => {
      const run = await runCli(['simulate', '--url', url]);

      expect([run.code, run.stdout, run.stderr]).toEqual([
        2,
        '',
        `Error: --url must be an absolute http:// or https:// URL; ${shown}\n` +
          'Run "nestjs-payouts simulate --help" for the options.\n',
      ]);
    });
  });

  describe('exits 2, naming the option and with no stack trace, for what cannot be sent', () => {
    it.each([
      ['a line break', 'x-token: abc\r\nX-Forged: 1'],
      ['an emoji', 'x-token: abc\u{1f600}'],
      ['DEL', 'x-token: abc\u007f'],
    ])('a header value with %s, which it never shows', async (_, header) => {
      receiver = await startScriptedReceiver([ACK]);

      const run = await runCli(['simulate', '--url', receiver.origin, '--header', header]);

      expect([run.code, run.stdout, run.stderr]).toEqual([
        2,
        '',
        'Error: --header x-token has a value no HTTP header can carry: a line break, another control character, ' +
          'or a character beyond Latin-1 such as an emoji (the value is not shown)\n' +
          'Run "nestjs-payouts simulate --help" for the options.\n',
      ]);
      expect(receiver.requests).toHaveLength(0);
    });

    it('a timeout no timer keeps', async () => {
      receiver = await startScriptedReceiver(['hang']);

      const run = await runCli(['simulate', '--url', receiver.origin, '--timeout-ms', '4294967296']);

      expect([run.code, run.stdout, run.stderr.split('\n')[0]]).toEqual([
        2,
        '',
        'Error: --timeout-ms must be a positive whole number of milliseconds up to 2147483647 (about 24 days); got 4294967296',
      ]);
      expect(receiver.requests).toHaveLength(0);
    });

    it('an overrides file nested 10,000 levels deep', async () => {
      receiver = await startScriptedReceiver([ACK]);
      const file = join(dir, 'deep.json');
      await writeFile(file, `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`);

      const run = await runCli(['simulate', '--url', receiver.origin, '--overrides', file]);

      expect([run.code, run.stdout, run.stderr]).toEqual([
        2,
        '',
        `Error: the --overrides file ${file} nests objects and arrays more than 64 levels deep\n` +
          'Run "nestjs-payouts simulate --help" for the options.\n',
      ]);
      expect(receiver.requests).toHaveLength(0);
    });
  });
});
