import { afterEach, describe, expect, it } from 'vitest';
import { NotificationRefusalLog } from '../../lib/notifications/http/notification-refusal-log.js';
import { PackageLogger } from '../../lib/common/package-logger.js';
import { RecordingLogger } from '../recording-logger.js';

describe('NotificationRefusalLog', () => {
  let now = 0;
  let logger: RecordingLogger;
  let log: NotificationRefusalLog;

  afterEach(() => log.close());

  function create(): void {
    now = 1_000_000;
    logger = new RecordingLogger();
    log = new NotificationRefusalLog(new PackageLogger(logger), 'account eu, /eu/notifications', () => now);
  }

  it('logs ten refusals per status and minute, sums up the rest when the minute ends, then logs again', () => {
    create();
    for (let index = 0; index < 12; index++) log.refused(401, '203.0.113.7', 'the secret does not match');
    log.refused(415, '203.0.113.7', 'no Content-Type');
    expect(logger.messages('warn')).toHaveLength(11);
    expect(logger.messages('warn')[10]).toBe(
      'Notification refused with 415 from 203.0.113.7 (account eu, /eu/notifications): no Content-Type',
    );

    now += 60_000;
    log.refused(401, '2001:db8::1', 'the secret is missing');
    expect(logger.messages('warn').slice(11)).toEqual([
      'Notification refusals not logged one by one in the last 60 s (account eu, /eu/notifications): 2 with 401',
      'Notification refused with 401 from 2001:db8::1 (account eu, /eu/notifications): the secret is missing',
    ]);
  });

  it('sums up what is still counted when it closes', () => {
    create();
    for (let index = 0; index < 11; index++) log.refused(400, '127.0.0.1', 'invalid fields eventType');
    log.close();
    expect(logger.messages('warn').at(-1)).toBe(
      'Notification refusals not logged one by one in the last 60 s (account eu, /eu/notifications): 1 with 400',
    );
  });

  it('prints only an address as the client address', () => {
    create();
    log.refused(401, 'evil\nforged log line', 'the secret is missing');
    log.refused(401, undefined, 'the secret is missing');
    expect(logger.messages('warn')).toEqual([
      'Notification refused with 401 from an unknown address (account eu, /eu/notifications): the secret is missing',
      'Notification refused with 401 from an unknown address (account eu, /eu/notifications): the secret is missing',
    ]);
  });
});
