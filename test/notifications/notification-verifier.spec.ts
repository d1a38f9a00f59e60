import { describe, expect, it } from 'vitest';
import {
  resolveNotificationsConfig,
  type NotificationVerificationConfig,
} from '../../lib/notifications/notifications-config.js';
import { createNotificationVerifier } from '../../lib/notifications/http/notification-verifier.js';
import { PackageLogger } from '../../lib/common/package-logger.js';
import { RecordingLogger } from '../recording-logger.js';

function verificationOf(value: unknown): NotificationVerificationConfig {
  const config = resolveNotificationsConfig({ verification: { secret: { value } } } as never);
  return (config as { verification: NotificationVerificationConfig }).verification;
}

const request = (token: string) => ({ headers: {}, query: { token }, ip: '127.0.0.1', rawBody: undefined });

describe('the secret check of a rotation', () => {
  it('logs the label that verified requests at its first use, then at most once an hour with the count since', () => {
    let now = Date.parse('2026-11-24T08:00:00Z');
    const logger = new RecordingLogger();
    const verify = createNotificationVerifier(
      verificationOf([
        { value: 'new-secret-0123456789abcdef', label: 'new' },
        { value: 'old-secret-0123456789abcdef', label: 'old', notAfter: '2026-11-24T10:00:00Z' },
      ]),
      new PackageLogger(logger),
      () => now,
    );
    const lines = () => logger.messages('log');
    expect(verify(request('old-secret-0123456789abcdef'))).toBeUndefined();
    for (let minute = 1; minute <= 59; minute++) {
      now += 60_000;
      expect(verify(request('old-secret-0123456789abcdef'))).toBeUndefined();
    }
    expect(lines()).toEqual([
      'Notifications verified with the secret old (query parameter token): the first since the app started',
    ]);
    now += 60_000;
    expect(verify(request('old-secret-0123456789abcdef'))).toBeUndefined();
    expect(lines()[1]).toBe(
      'Notifications verified with the secret old (query parameter token): 60 since 2026-11-24T08:00:00.000Z',
    );

    now = Date.parse('2026-11-24T10:00:00.001Z');
    expect(verify(request('old-secret-0123456789abcdef'))).toBe(
      'the secret old expired at 2026-11-24T10:00:00.000Z (query parameter token)',
    );
    expect(verify(request('new-secret-0123456789abcdef'))).toBeUndefined();
    expect(verify(request('newer-secret-0123456789abcdef'))).toBe('the secret does not match (query parameter token)');
    expect(lines()).toHaveLength(3);
    expect(lines()[2]).toContain('secret new ');
  });

  it('verifies a value listed twice by whichever entry is still valid, in either order, until both expire', () => {
    let now = Date.parse('2026-11-24T08:00:00Z');
    const twice = (first: object, second: object) =>
      createNotificationVerifier(
        verificationOf([
          { value: 'shared-secret-0123456789abcdef', ...first },
          { value: 'shared-secret-0123456789abcdef', ...second },
        ]),
        new PackageLogger(new RecordingLogger()),
        () => now,
      );
    const expired = { label: 'old', notAfter: '2026-11-24T07:00:00Z' };
    for (const verify of [
      twice(expired, { label: 'new' }),
      twice({ label: 'new' }, expired),
      twice(expired, { label: 'new', notAfter: '2026-11-24T09:00:00Z' }),
    ]) {
      expect(verify(request('shared-secret-0123456789abcdef'))).toBeUndefined();
      expect(verify(request('other-secret-0123456789abcdef'))).toBe(
        'the secret does not match (query parameter token)',
      );
    }
    const bothExpire = twice(expired, { label: 'new', notAfter: '2026-11-24T09:00:00Z' });
    now = Date.parse('2026-11-24T09:00:00.001Z');
    expect(bothExpire(request('shared-secret-0123456789abcdef'))).toBe(
      'the secret old expired at 2026-11-24T07:00:00.000Z (query parameter token)',
    );
  });

  it('logs nothing per request for a single secret', () => {
    const logger = new RecordingLogger();
    const verify = createNotificationVerifier(
      verificationOf('single-secret-0123456789abcdef'),
      new PackageLogger(logger),
    );
    expect(verify(request('single-secret-0123456789abcdef'))).toBeUndefined();
    expect(logger.lines).toEqual([]);
  });
});
