import { afterEach, describe, expect, it } from 'vitest';
import { AuditTrail, CardEvents } from './notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, type NotificationsApp, post, startNotificationsApp } from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const PATH = 'payouts/notifications';
const LONE = '\udfff';

type Body = ReturnType<typeof cardAdded> & {
  shopper: Record<string, unknown>;
  paymentMethod: Record<string, unknown> & { card: Record<string, unknown> };
};
const notification = () => cardAdded() as Body;

/*
 * Any string JSON can carry, lone UTF-16 surrogates included, in any field: either the documented 400 naming the
 * field, or handling and the ack; never a 500. `JSON.stringify` writes a lone surrogate as the escape `\udfff`.
 */
describe.each(ADAPTERS)('odd strings on %s', (adapter) => {
  let running: NotificationsApp | undefined;
  let logger: RecordingLogger;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(bodyLimitBytes?: number): Promise<NotificationsApp> {
    logger = new RecordingLogger();
    running = await startNotificationsApp({
      adapter,
      logger,
      notifications: { verification: 'none', ...(bodyLimitBytes && { bodyLimitBytes }) },
      providers: [CardEvents, AuditTrail],
    });
    return running;
  }

  const received = () => running!.app.get(CardEvents).received;
  /** The catch-all handler receives every notification, whatever its event type. */
  const audited = () => running!.app.get(AuditTrail).received.map((entry) => entry.notification);
  const send = (body: unknown) => post(running!.url(PATH), body);

  it.each<[string, (body: Body) => void, (seen: Body) => unknown]>([
    ['eventType', (body) => (body.eventType = `PAYMENT_METHOD_${LONE}`), (seen) => seen.eventType],
    ['shopper.id', (body) => (body.shopper.id = `shp_${LONE}`), (seen) => seen.shopper.id],
    ['paymentMethod.id', (body) => (body.paymentMethod.id = `pmt_${LONE}`), (seen) => seen.paymentMethod.id],
    [
      'shopper.partner_shopper_id',
      (body) => (body.shopper.partner_shopper_id = `p${LONE}`),
      (seen) => seen.shopper.partner_shopper_id,
    ],
    ['paymentMethod.type', (body) => (body.paymentMethod.type = `card${LONE}`), (seen) => seen.paymentMethod.type],
    ['an unknown field', (body) => (body.nickname = `${LONE}\ud800`), (seen) => seen.nickname],
  ])('acknowledges a lone surrogate in %s and hands the exact string over', async (_field, mutate, pick) => {
    await start();
    const body = notification();
    mutate(body);
    const reply = await send(body);
    expect(reply.status).toBe(200);
    expect(reply.body).toBe('{"ResultCode":0}');
    expect(audited()).toHaveLength(1);
    expect(pick(audited()[0] as unknown as Body)).toBe(pick(body));
    expect(logger.messages('error')).toEqual([]);
  });

  it.each<[string, (body: Body) => void]>([
    ['shopper.email', (body) => (body.shopper.email = `${LONE}@example.com`)],
    ['timestamp', (body) => (body.timestamp = `2025-03-14T09:26:53${LONE}Z`)],
    ['paymentMethod.card.lastFour', (body) => (body.paymentMethod.card.lastFour = `424${LONE}`)],
  ])('answers 400 naming %s for a lone surrogate there', async (field, mutate) => {
    await start();
    const body = notification();
    mutate(body);
    const reply = await send(body);
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body).errors).toEqual([{ field, message: expect.any(String) }]);
    expect(received()).toEqual([]);
  });

  it('keeps ids with a lone surrogate and with U+FFFD apart: both are handled', async () => {
    await start();
    const first = notification();
    const second = { ...first, paymentMethod: { ...first.paymentMethod, id: 'pmt_\ufffd' } };
    first.paymentMethod.id = `pmt_${LONE}`;
    expect((await send(first)).status).toBe(200);
    expect((await send(second)).status).toBe(200);
    expect((await send(first)).status).toBe(200);
    const keys = received().map((entry) => entry.context.dedupeKey);
    expect(keys).toHaveLength(2);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[0]).toMatch(/:pmt_%ED%BF%BF:/);
  });

  it('bounds the dedupe key of 60,000-character ids, keeps same-length ids apart, and recognises re-sends', async () => {
    await start(100_000);
    const longId = (last: string) => `pmt_${'x'.repeat(60_000)}${last}`;
    const first = notification();
    first.paymentMethod.id = longId('a');
    const second = { ...first, paymentMethod: { ...first.paymentMethod, id: longId('b') } };
    expect((await send(first)).status).toBe(200);
    expect((await send(second)).status).toBe(200);
    expect((await send(first)).status).toBe(200);
    const entries = received();
    expect(entries.map((entry) => entry.notification.paymentMethod.id)).toEqual([longId('a'), longId('b')]);
    const [firstKey, secondKey] = entries.map((entry) => entry.context.dedupeKey);
    expect(firstKey).toMatch(/^sha256:[\w-]{43}$/);
    expect(secondKey).toMatch(/^sha256:[\w-]{43}$/);
    expect(firstKey).not.toBe(secondKey);
  });
});
