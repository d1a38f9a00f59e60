import type { MetricData } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutsModule, PayoutsService } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import { CardEvents } from '../notifications/notification-handlers.fixture.js';
import {
  ADAPTERS,
  cardAdded,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';
import { PayoutsApiStub } from '../payouts/payouts-api-stub.js';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { registerGlobalContext, traceHttpServer, useInMemoryTelemetry } from './in-memory-telemetry.js';

registerGlobalContext();

const API_KEY = 'api-key-LEAK-CHECK-3f9a7c';
const FIRST_TOKEN = 'token-LEAK-CHECK-first-81b2';
const FRESH_TOKEN = 'token-LEAK-CHECK-fresh-c4d7';
const NOTIFICATION_SECRET = 'notification-secret-LEAK-CHECK-55e1';
const EMAIL = 'jane.doe.leakcheck@example.com';
const PHONE = '254712345678';
const SHOPPER_ID = 'shp_LEAK_CHECK_77';
/** Anything that a span, a metric or an event must never hold: credentials, the secret, the shopper, bodies. */
const FORBIDDEN = [
  API_KEY,
  FIRST_TOKEN,
  FRESH_TOKEN,
  NOTIFICATION_SECRET,
  EMAIL,
  PHONE,
  SHOPPER_ID,
  'Jane Doe',
  'Invoice 42',
];

/** Every string a span holds: its name, attributes, status, and its events with their attributes. */
function spanText(span: ReadableSpan): string {
  return JSON.stringify([span.name, span.attributes, span.status, span.events, span.links]);
}

/** Every string a metric holds: its descriptor and the attributes of each data point. */
function metricText(metric: MetricData): string {
  return JSON.stringify([metric.descriptor, metric.dataPoints.map(({ attributes }) => attributes)]);
}

describe.each(ADAPTERS)('nothing secret or personal in telemetry or events on %s', (adapter) => {
  const telemetry = useInMemoryTelemetry();
  let running: NotificationsApp | undefined;
  let stub: PayoutsApiStub | undefined;

  afterEach(async () => {
    await running?.close();
    await stub?.close();
    running = undefined;
  });

  it('on every path: handled, failing, refused and invalid notifications; created, rejected and lost payouts', async () => {
    stub = await PayoutsApiStub.start();
    const { tracerProvider, meterProvider } = telemetry.current;
    let tokens = 0;
    running = await startNotificationsApp({
      adapter,
      imports: [
        PayoutsModule.forRoot({
          baseUrl: stub.baseUrl,
          apiKey: API_KEY,
          accessToken: () => (tokens++ === 0 ? FIRST_TOKEN : FRESH_TOKEN),
          retries: { baseDelayMs: 1, maxDelayMs: 5 },
          timeoutMs: 200,
          notifications: { verification: { secret: { value: NOTIFICATION_SECRET } } },
          telemetry: payoutsOpenTelemetry({ tracerProvider, meterProvider }),
        }),
      ],
      providers: [CardEvents],
      configure: (app) => traceHttpServer(app.getHttpServer(), tracerProvider.getTracer('http')),
    });
    const payouts = running.app.get(PayoutsService);
    const events: unknown[] = [];
    for (const name of ['request', 'response', 'notification'] as const) {
      payouts.on(name, (event) => events.push(event));
    }
    const notification = () =>
      cardAdded({ shopper: { id: SHOPPER_ID, partner_shopper_id: 'merchant-42', email: EMAIL } });
    const deliver = (body: unknown, token = NOTIFICATION_SECRET) =>
      post(running!.url(`payouts/notifications?token=${token}`), body);
    const cards = running.app.get(CardEvents);

    expect((await deliver(notification())).status).toBe(200);
    cards.behaviour = (received) => {
      // What a database says of a duplicate key: the data itself.
      throw new Error(`duplicate key (email)=(${received.shopper.email}) for ${received.shopper.id}`);
    };
    expect((await deliver(notification())).status).toBe(500);
    expect((await deliver(notification(), `${NOTIFICATION_SECRET}-wrong`)).status).toBe(401);
    expect((await deliver({ ...notification(), timestamp: EMAIL })).status).toBe(400);

    const request = { ...walletPayoutRequest('req_leak'), reference: 'Invoice 42 / March' };
    // An API that echoes what it was sent: the credentials, the phone number, the beneficiary.
    const echo = { error: `bad ${PHONE} for Jane Doe`, key: API_KEY, token: FRESH_TOKEN };
    stub.reply(
      { status: 401, body: echo },
      { status: 503, body: echo },
      { status: 201, body: { id: 'po_1', echo } },
      { status: 422, body: echo },
      'hang',
    );
    await payouts.createPayout(request);
    await expect(payouts.createPayout(request)).rejects.toMatchObject({ status: 422 });
    await expect(payouts.createPayout(request)).rejects.toMatchObject({ code: 'ETIMEDOUT' });

    const spans = telemetry.current.spans();
    const metrics = [...(await telemetry.current.metrics()).values()];
    expect(spans.map((span) => span.name)).toContain('payouts.create_payout');
    expect(spans.some((span) => span.events.some((event) => event.name === 'exception'))).toBe(true);
    expect(metrics.length).toBeGreaterThanOrEqual(5);
    expect(events.length).toBeGreaterThanOrEqual(12);
    const recorded = [
      ...spans.map(spanText),
      ...metrics.map(metricText),
      ...events.map((event) => JSON.stringify(event)),
    ];
    const leaks = recorded.flatMap((text) =>
      FORBIDDEN.filter((value) => text.includes(value)).map((value) => [value, text]),
    );
    expect(leaks).toEqual([]);
  });
});
