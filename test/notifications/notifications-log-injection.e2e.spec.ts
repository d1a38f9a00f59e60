import { afterEach, describe, expect, it } from 'vitest';
import { CardEvents } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const PATH = 'payouts/notifications';
/** What must never reach a log line raw: C0 (CR, LF, ESC), DEL, C1, the line separators and the bidi controls. */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/*
 * Outside values reach the log only through printable(): a verified sender's event type, an unverified caller's
 * headers. A CR/LF would forge a line, an ESC or a C1 CSI would drive the operator's terminal, a bidi control would
 * reorder what the operator reads.
 */
describe.each(ADAPTERS)('log injection on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(): Promise<NotificationsApp> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      notifications: { verification: 'none' },
      providers: [CardEvents],
    });
    return running;
  }

  function expectEveryLineSafe(): void {
    for (const line of [...logger.messages('warn'), ...logger.messages('error')]) {
      expect(line).not.toMatch(UNSAFE);
    }
  }

  it('escapes an event type nobody handles in the "No handler" line, and still acknowledges it', async () => {
    await start();
    const eventType = 'PAYMENT_METHOD_\r\nWARN forged\u001b[2J\u009b31m\u2028\u202eX';
    const reply = await post(running!.url(PATH), cardAdded({ eventType }));
    expect(reply.status).toBe(200);
    const line = logger.messages('warn').find((message) => message.startsWith('No handler for'));
    expect(line).toMatch(
      /^No handler for "PAYMENT_METHOD_\\r\\nWARN forged\\u001b\[2J\\u009b31m\\u2028\\u202eX" notification \S+; acknowledged$/,
    );
    expectEveryLineSafe();
  });

  it('escapes the C1 and C0 characters of an unverified Content-Type in the 415 line', async () => {
    await start();
    const reply = await post(running!.url(PATH), JSON.stringify(cardAdded()), {
      headers: { 'content-type': 'text/\u009b31mplain\u0085x' },
    });
    expect(reply.status).toBe(415);
    const refusals = logger.messages('warn').filter((line) => line.startsWith('Notification refused'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toContain('Content-Type "text/\\u009b31mplain\\u0085x" is not application/json');
    expectEveryLineSafe();
  });
});
