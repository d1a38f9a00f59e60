import { expect, it } from 'vitest';
import { listFailedNotifications } from 'nestjs-payouts/queue';
import { cardAdded, post } from '../notifications/notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { ACK, queueSuite } from './queue-test-app.js';

/** What must never reach a log line raw: C0 (CR, LF, ESC, BEL), DEL, C1, the line separators and the bidi controls. */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** An event type, or an error's message, with a forged line, terminal sequences (7-bit and 8-bit), BEL and bidi. */
const HOSTILE = 'CARD_\r\nWARN [PayoutsQueue] forged\u001b[31m\u0007\u009b2J\u2028\u202eX';
const SHOWN = 'CARD_\\r\\nWARN [PayoutsQueue] forged\\u001b[31m\\u0007\\u009b2J\\u2028\\u202eX';

/** Every line the logger got, the stacks that follow a message line by line. */
function expectEveryLineSafe(logger: RecordingLogger): void {
  for (const line of logger.lines.flatMap((entry) => entry.split('\n'))) expect(line).not.toMatch(UNSAFE);
}

/*
 * The worker of queue mode writes what the stored notification and the handlers hold (an event type, an error's
 * message) escaped, as the route does: no value a sender or a handler chose can forge a line or drive a terminal.
 */
describeWithRedis('log lines of the queue worker, given hostile values', () => {
  const { launch } = queueSuite();

  it('escapes an unknown event type in the "No handler" line, and completes the job', async () => {
    const logger = new RecordingLogger();
    const app = await launch('express', {}, { logger, providers: [] });
    expect((await post(app.route, cardAdded({ eventType: HOSTILE }))).body).toBe(ACK);

    const line = await eventually(
      async () => logger.messages('warn').find((message) => message.endsWith('; completed')),
      10_000,
      'the worker logs that no handler takes it',
    );
    expect(line).toMatch(new RegExp(`^No handler for "${escapeRegExp(SHOWN)}" notification \\S+; completed$`));
    expectEveryLineSafe(logger);
  });

  it("escapes a handler's error message in the retry warning and in the final error", async () => {
    const logger = new RecordingLogger();
    const app = await launch('fastify', { attempts: 2, backoffMs: 20 }, { logger });
    app.events.behaviour = () => {
      throw new Error(HOSTILE);
    };
    expect((await post(app.route, cardAdded())).body).toBe(ACK);
    await eventually(
      async () => ((await listFailedNotifications(app.queue)).length > 0 ? true : undefined),
      10_000,
      'the notification is in the failed set',
    );

    const failedOnce = logger.messages('warn').find((message) => message.startsWith('QueuedEvents.handle failed'));
    expect(failedOnce).toMatch(new RegExp(`\\(attempt 1 of 2\\): Error: ${escapeRegExp(SHOWN)}\\\\n\\s+at `));
    const errors = logger.messages('error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      new RegExp(`failed for good after 2 attempts: .*QueuedEvents\\.handle: ${escapeRegExp(SHOWN)}`),
    );
    expectEveryLineSafe(logger);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
