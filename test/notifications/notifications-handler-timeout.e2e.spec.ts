import { Injectable, type Provider } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { OnPaymentMethodEvent } from 'nestjs-payouts';
import { AuditTrail, CardEvents, deferred } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const PATH = 'payouts/notifications';
const ACK = '{"ResultCode":0}';
const TIMEOUT_MS = 150;

/** An asynchronous handler of every event that settles at once. */
@Injectable()
class PromptAudit {
  @OnPaymentMethodEvent()
  async record(): Promise<void> {
    await Promise.resolve();
  }
}

/*
 * A handler that outlives `handlerTimeoutMs` gets the notification answered with 500, so that the service sends it
 * again; its key stays claimed until it settles, so no re-send runs the handlers while it may still be running.
 */
describe.each(ADAPTERS)('handler time limit on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(providers: Provider[] = [CardEvents], handlerTimeoutMs = TIMEOUT_MS): Promise<CardEvents> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      notifications: { verification: 'none', handlerTimeoutMs },
      providers,
    });
    return running.app.get(CardEvents);
  }

  const send = (body: unknown) => post(running!.url(PATH), body);

  /** Resolves once `condition` holds, polling the app's state (the late handler settles on its own schedule). */
  async function until(condition: () => boolean): Promise<void> {
    for (let attempt = 0; !condition(); attempt++) {
      if (attempt > 200) throw new Error('condition not met within 2 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('answers 500 past the limit, keeps the claim until the handler settles, then acknowledges re-sends', async () => {
    const events = await start();
    const gate = deferred();
    events.behaviour = () => gate.promise;
    const body = cardAdded();

    const first = await send(body);
    expect(first.status).toBe(500);
    expect(JSON.parse(first.body)).toEqual({ statusCode: 500, message: 'The notification could not be handled' });
    const key = events.received[0]!.context.dedupeKey;
    expect(logger.messages('error')).toContainEqual(
      expect.stringContaining(
        `The handlers of notification ${key} (CardEvents.added) did not settle within handlerTimeoutMs (${TIMEOUT_MS} ms)`,
      ),
    );

    const whileRunning = await send(body);
    expect(whileRunning.status).toBe(409);
    expect(events.received).toHaveLength(1);

    gate.resolve();
    await until(() => logger.messages('warn').some((line) => line.includes('settled after')));
    expect(logger.messages('warn')).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^The handlers of notification ${key.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&')} settled after \\d+ ms, past their timeout; recorded as handled`,
        ),
      ),
    );
    const afterwards = await send(body);
    expect(afterwards.status).toBe(200);
    expect(afterwards.body).toBe(ACK);
    expect(events.received).toHaveLength(1);
  });

  it('releases the notification when the late handler fails, so the re-send runs it again', async () => {
    const events = await start();
    const gate = deferred();
    events.behaviour = async () => {
      await gate.promise;
      throw new Error('late failure');
    };
    const body = cardAdded();
    expect((await send(body)).status).toBe(500);
    gate.resolve();
    await until(() =>
      logger
        .messages('warn')
        .some((line) => line.includes('released: a re-send runs again only those that did not succeed')),
    );

    events.behaviour = () => undefined;
    const resent = await send(body);
    expect(resent.body).toBe(ACK);
    expect(events.received).toHaveLength(2);
  });

  it('names only the late handlers in the time-limit error, not those that settled in time', async () => {
    const events = await start([CardEvents, AuditTrail, PromptAudit]);
    const gate = deferred();
    events.behaviour = () => gate.promise;
    expect((await send(cardAdded())).status).toBe(500);
    const key = events.received[0]!.context.dedupeKey;
    const timeouts = logger.messages('error').filter((line) => line.includes('did not settle'));
    expect(timeouts).toEqual([
      expect.stringContaining(`The handlers of notification ${key} (CardEvents.added) did not`),
    ]);
    gate.resolve();
    await until(() => logger.messages('warn').some((line) => line.includes('settled after')));
  });

  it('acknowledges a handler that finishes in time, with no timeout logged', async () => {
    const events = await start();
    events.behaviour = () => new Promise((resolve) => setTimeout(resolve, 20));
    expect((await send(cardAdded())).body).toBe(ACK);
    expect(logger.messages('error')).toEqual([]);
  });

  it('keeps each notification to its own limit when several are in flight: a later one settling after the first timed out is acknowledged', async () => {
    // One timer serves every notification in flight: the second one's limit, which passes a second after the first
    // one's, must still hold when the first one times out.
    const limitMs = 2000;
    const events = await start([CardEvents], limitMs);
    const gates = [deferred(), deferred()];
    events.behaviour = () => gates[events.received.length - 1]!.promise;
    const firstBody = cardAdded();
    const first = send(firstBody);
    await until(() => events.received.length === 1);
    await new Promise((resolve) => setTimeout(resolve, limitMs / 2));
    const second = send(cardAdded());
    await until(() => events.received.length === 2);

    const firstReply = await first;
    expect(firstReply.status).toBe(500);
    // The first one's limit passed; the second one's is about a second ahead.
    gates[1]!.resolve();
    const secondReply = await second;
    expect(secondReply.status).toBe(200);
    expect(secondReply.body).toBe(ACK);
    const timeouts = logger.messages('error').filter((line) => line.includes('did not settle'));
    expect(timeouts).toEqual([
      expect.stringContaining(
        `The handlers of notification ${events.received[0]!.context.dedupeKey} (CardEvents.added)`,
      ),
    ]);

    gates[0]!.resolve();
    await until(() => logger.messages('warn').some((line) => line.includes('settled after')));
    const resent = await send(firstBody);
    expect(resent.body).toBe(ACK);
    expect(events.received).toHaveLength(2);
  });

  it('times out a notification sent after an earlier one settled in time', async () => {
    const events = await start();
    events.behaviour = () => undefined;
    expect((await send(cardAdded())).body).toBe(ACK);
    const gate = deferred();
    events.behaviour = () => gate.promise;
    const late = await send(cardAdded());
    expect(late.status).toBe(500);
    expect(logger.messages('error')).toEqual([
      expect.stringContaining(
        `The handlers of notification ${events.received[1]!.context.dedupeKey} (CardEvents.added) did not settle`,
      ),
    ]);
    gate.resolve();
    await until(() => logger.messages('warn').some((line) => line.includes('settled after')));
  });
});
