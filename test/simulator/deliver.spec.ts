import { afterEach, describe, expect, it } from 'vitest';
import { type DeliveryAttempt, deliver, paymentMethodAddedNotification, rawNotification } from 'nestjs-payouts/testing';
import { VirtualClock } from 'nestjs-payouts/testing';
import { ACK, type ScriptedReceiver, startScriptedReceiver, unusedLocalUrl } from './scripted-receiver.js';

const FIVE_MINUTES = 300_000;

describe('deliver()', () => {
  let receiver: ScriptedReceiver | undefined;

  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('POSTs the notification as JSON and stops at the first acknowledgement', async () => {
    receiver = await startScriptedReceiver([ACK]);
    const notification = paymentMethodAddedNotification();
    const clock = new VirtualClock();

    const report = await deliver(`${receiver.origin}/payouts/notifications?token=s3cret`, notification, { clock });

    expect(report).toEqual({
      delivered: true,
      alertedTechnicalContact: false,
      attempts: [{ attempt: 1, at: clock.now(), acknowledged: true, status: 200, body: '{"ResultCode":0}' }],
    });
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/payouts/notifications?token=s3cret');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual(notification);
  });

  it('re-sends the same bytes at the interval until a reply acknowledges it', async () => {
    receiver = await startScriptedReceiver([
      { status: 500, body: '{"message":"Internal server error"}' },
      { status: 200, body: '{"ResultCode":"0"}' },
      ACK,
    ]);
    const clock = new VirtualClock(new Date('2030-01-01T12:00:00.000Z'));

    const report = await deliver(`${receiver.origin}/hooks`, paymentMethodAddedNotification(), { clock });

    expect(report.delivered).toBe(true);
    expect(report.alertedTechnicalContact).toBe(false);
    expect(report.attempts.map((a) => [a.attempt, a.at.toISOString(), a.status, a.acknowledged])).toEqual([
      [1, '2030-01-01T12:00:00.000Z', 500, false],
      [2, '2030-01-01T12:05:00.000Z', 200, false],
      [3, '2030-01-01T12:10:00.000Z', 200, true],
    ]);
    expect(report.attempts[0]?.failure).toBe(
      'replied with status 500; expected status 200 with the JSON body {"ResultCode":0}',
    );
    expect(report.attempts[1]?.failure).toBe(
      'replied with ResultCode "0"; expected status 200 with the JSON body {"ResultCode":0}',
    );
    expect(clock.sleeps).toEqual([FIVE_MINUTES, FIVE_MINUTES]);
    const bodies = receiver.requests.map((r) => r.body);
    expect(new Set(bodies).size).toBe(1);
  });

  it('makes 4 attempts by default, then reports the alert to the technical contact', async () => {
    receiver = await startScriptedReceiver([{ status: 401, body: '{"statusCode":401}' }]);
    const clock = new VirtualClock();
    const seen: DeliveryAttempt[] = [];

    const report = await deliver(receiver.origin, paymentMethodAddedNotification(), {
      clock,
      onAttempt: (attempt) => seen.push(attempt),
    });

    expect(report.delivered).toBe(false);
    expect(report.alertedTechnicalContact).toBe(true);
    expect(report.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(seen).toEqual(report.attempts);
    expect(receiver.requests).toHaveLength(4);
    expect(clock.sleeps).toEqual([FIVE_MINUTES, FIVE_MINUTES, FIVE_MINUTES]);
  });

  it('honours attempts and intervalMs', async () => {
    receiver = await startScriptedReceiver([{ status: 503, body: '' }]);
    const clock = new VirtualClock();

    const report = await deliver(receiver.origin, paymentMethodAddedNotification(), {
      clock,
      attempts: 2,
      intervalMs: 25,
    });

    expect(report.attempts).toHaveLength(2);
    expect(clock.sleeps).toEqual([25]);
  });

  it.each([
    [{ status: 201, body: '{"ResultCode":0}' }, 'replied with status 201'],
    [{ status: 204, body: '' }, 'replied with status 204'],
    [{ status: 302, body: '' }, 'replied with status 302'],
    [{ status: 200, body: 'OK' }, 'replied with a body that is not JSON'],
    [{ status: 200, body: '' }, 'replied with a body that is not JSON'],
    [{ status: 200, body: '{}' }, 'replied without a ResultCode'],
    [{ status: 200, body: '[0]' }, 'replied without a ResultCode'],
    [{ status: 200, body: 'null' }, 'replied without a ResultCode'],
    [{ status: 200, body: '{"resultCode":0}' }, 'replied without a ResultCode'],
    [{ status: 200, body: '{"ResultCode":1}' }, 'replied with ResultCode 1'],
    [{ status: 200, body: '{"ResultCode":0.5}' }, 'replied with ResultCode 0.5'],
    [{ status: 200, body: '{"ResultCode":false}' }, 'replied with ResultCode false'],
    [{ status: 200, body: '{"ResultCode":null}' }, 'replied with ResultCode null'],
  ])('does not count %j as an acknowledgement', async (reply, failure) => {
    receiver = await startScriptedReceiver([reply]);

    const report = await deliver(receiver.origin, paymentMethodAddedNotification(), { attempts: 1 });

    expect(report.delivered).toBe(false);
    expect(report.attempts[0]?.status).toBe(reply.status);
    expect(report.attempts[0]?.body).toBe(reply.body);
    expect(report.attempts[0]?.failure).toBe(`${failure}; expected status 200 with the JSON body {"ResultCode":0}`);
  });

  it('accepts extra fields next to ResultCode 0', async () => {
    receiver = await startScriptedReceiver([{ status: 200, body: '{"ResultCode":0,"received":true}' }]);

    const report = await deliver(receiver.origin, paymentMethodAddedNotification(), { attempts: 1 });

    expect(report.delivered).toBe(true);
  });

  it('records an unreachable host as an attempt without a reply', async () => {
    const url = await unusedLocalUrl();

    const report = await deliver(url, paymentMethodAddedNotification(), { attempts: 2, clock: new VirtualClock() });

    expect(report.delivered).toBe(false);
    expect(report.alertedTechnicalContact).toBe(true);
    expect(report.attempts).toHaveLength(2);
    expect(report.attempts[0]).toMatchObject({
      acknowledged: false,
      error: { kind: 'unreachable', message: 'cannot reach the host (ECONNREFUSED)' },
      failure: 'cannot reach the host (ECONNREFUSED)',
    });
    expect(report.attempts[0]).not.toHaveProperty('status');
  });

  it('gives up on an attempt that gets no reply within timeoutMs', async () => {
    receiver = await startScriptedReceiver(['hang', ACK]);

    const report = await deliver(receiver.origin, paymentMethodAddedNotification(), {
      timeoutMs: 50,
      clock: new VirtualClock(),
    });

    expect(report.delivered).toBe(true);
    expect(report.attempts[0]?.error).toEqual({ kind: 'timeout', message: 'no complete reply within 50 ms' });
    expect(report.attempts[1]?.acknowledged).toBe(true);
  });

  it('sends a raw body byte for byte with its content type', async () => {
    receiver = await startScriptedReceiver([{ status: 400, body: '{"message":"Invalid JSON"}' }]);

    await deliver(receiver.origin, rawNotification('{"eventType":', 'text/plain'), { attempts: 1 });

    expect(receiver.requests[0]?.body).toBe('{"eventType":');
    expect(receiver.requests[0]?.headers['content-type']).toBe('text/plain');
  });

  it('adds the given headers to every attempt', async () => {
    receiver = await startScriptedReceiver([{ status: 401, body: '' }, ACK]);

    await deliver(receiver.origin, paymentMethodAddedNotification(), {
      headers: { 'x-notification-secret': 'shh' },
      clock: new VirtualClock(),
    });

    expect(receiver.requests.map((r) => r.headers['x-notification-secret'])).toEqual(['shh', 'shh']);
  });

  it('stops when onAttempt throws, and rethrows', async () => {
    receiver = await startScriptedReceiver([{ status: 500, body: '' }]);
    const stop = new Error('stop');

    await expect(
      deliver(receiver.origin, paymentMethodAddedNotification(), {
        clock: new VirtualClock(),
        onAttempt: () => {
          throw stop;
        },
      }),
    ).rejects.toBe(stop);
    expect(receiver.requests).toHaveLength(1);
  });

  it.each([
    ['not a url', TypeError, 'deliver(): url must be an absolute http:// or https:// URL, got "not a url"'],
    ['/relative', TypeError, 'deliver(): url must be an absolute http:// or https:// URL, got "/relative"'],
    ['ftp://example.com/', TypeError, 'deliver(): url must use http:// or https://, got "ftp:"'],
  ])('rejects the url %j', async (url, type, message) => {
    const failure = deliver(url, paymentMethodAddedNotification());
    await expect(failure).rejects.toThrow(type);
    await expect(failure).rejects.toThrow(message);
  });

  it.each([
    [{ attempts: 0 }, 'deliver(): options.attempts must be a whole number of at least 1, got 0'],
    [{ attempts: 1.5 }, 'deliver(): options.attempts must be a whole number of at least 1, got 1.5'],
    [
      { intervalMs: -1 },
      'deliver(): options.intervalMs must be a whole number, 0 or more, of milliseconds up to 2147483647 (about 24 days), got -1',
    ],
    [
      { timeoutMs: 0 },
      'deliver(): options.timeoutMs must be a positive whole number of milliseconds up to 2147483647 (about 24 days), got 0',
    ],
    [
      { timeoutMs: 2 ** 31 },
      'deliver(): options.timeoutMs must be a positive whole number of milliseconds up to 2147483647 (about 24 days), got 2147483648',
    ],
    [
      { intervalMs: 2 ** 32 },
      'deliver(): options.intervalMs must be a whole number, 0 or more, of milliseconds up to 2147483647 (about 24 days), got 4294967296',
    ],
  ])('rejects the options %j', async (options, message) => {
    await expect(deliver('http://127.0.0.1:9/', paymentMethodAddedNotification(), options)).rejects.toThrow(
      new RangeError(message),
    );
  });

  it('rejects a notification that is not an object', async () => {
    await expect(deliver('http://127.0.0.1:9/', 'text' as unknown as object)).rejects.toThrow(
      new TypeError('deliver(): notification must be an object or a rawNotification()'),
    );
  });
});
