import type { MetricData } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPayoutsServiceToken, PayoutsModule, PayoutsService } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import { AuditTrail, CardEvents } from '../notifications/notification-handlers.fixture.js';
import { ADAPTERS, cardAdded, post, startNotificationsApp } from '../notifications/notifications-test-app.js';
import { PayoutsApiStub, refusingBaseUrl } from '../payouts/payouts-api-stub.js';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { InMemoryTelemetry, registerGlobalContext, traceHttpServer } from './in-memory-telemetry.js';
import { documentedTable } from './documented-telemetry-tables.js';

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

/** A rejected payout as its status or its error code. */
function outcomeOf(error: { name: string; status?: number; code?: string }): string {
  return error.status === undefined ? String(error.code) : `${error.name} ${error.status}`;
}

describe.each(ADAPTERS)('what telemetry and events record on every path, on %s', (adapter) => {
  const telemetry = new InMemoryTelemetry();
  const events: unknown[] = [];
  /** What each notification was answered, and what each payout resolved or rejected with, in order. */
  const paths: (number | string)[] = [];
  let spans: ReadableSpan[];
  let metrics: MetricData[];

  /**
   * Handled, failing, refused and invalid notifications; a payout retried after a 401 and a 503 then created, one
   * rejected, one whose reply never came, and one that could not reach the API.
   */
  beforeAll(async () => {
    const stub = await PayoutsApiStub.start();
    const { tracerProvider, meterProvider } = telemetry;
    let tokens = 0;
    const module = (baseUrl: string, name?: string) =>
      PayoutsModule.forRoot({
        ...(name && { name }),
        baseUrl,
        apiKey: API_KEY,
        accessToken: () => (tokens++ === 0 ? FIRST_TOKEN : FRESH_TOKEN),
        retries: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 5 },
        timeoutMs: 200,
        notifications: name ? false : { verification: { secret: { value: NOTIFICATION_SECRET } } },
        telemetry: payoutsOpenTelemetry({ tracerProvider, meterProvider }),
      });
    const running = await startNotificationsApp({
      adapter,
      imports: [module(stub.baseUrl), module(await refusingBaseUrl(), 'unreachable')],
      providers: [CardEvents, AuditTrail],
      configure: (app) => traceHttpServer(app.getHttpServer(), tracerProvider.getTracer('http')),
    });
    try {
      const payouts = running.app.get(PayoutsService);
      for (const name of ['request', 'response', 'notification'] as const) {
        payouts.on(name, (event) => events.push(event));
      }
      const notification = () =>
        cardAdded({ shopper: { id: SHOPPER_ID, partner_shopper_id: 'merchant-42', email: EMAIL } });
      const deliver = (body: unknown, token = NOTIFICATION_SECRET) =>
        post(running.url(`payouts/notifications?token=${token}`), body);
      const cards = running.app.get(CardEvents);

      paths.push((await deliver(notification())).status);
      cards.behaviour = (received) => {
        // What a database says of a duplicate key: the data itself.
        throw new Error(`duplicate key (email)=(${received.shopper.email}) for ${received.shopper.id}`);
      };
      const failing = notification();
      paths.push((await deliver(failing)).status);
      // The re-send runs the handler that failed, and skips the one that succeeded.
      cards.behaviour = () => undefined;
      paths.push((await deliver(failing)).status);
      paths.push((await deliver(notification(), `${NOTIFICATION_SECRET}-wrong`)).status);
      paths.push((await deliver({ ...notification(), timestamp: EMAIL })).status);

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
      const unreachable = running.app.get<PayoutsService>(getPayoutsServiceToken('unreachable'));
      for (const service of [payouts, payouts, payouts, unreachable]) {
        paths.push(await service.createPayout(request).then(({ status }) => status, outcomeOf));
      }
    } finally {
      await running.close();
      await stub.close();
    }
    spans = telemetry.spans();
    metrics = [...(await telemetry.metrics()).values()];
  });
  afterAll(() => telemetry.shutdown());

  it('went down every path', () => {
    expect(paths).toEqual([200, 500, 200, 401, 400, 201, 'PayoutsApiError 422', 'ETIMEDOUT', 'ECONNREFUSED']);
  });

  it('holds no credential, secret, shopper data nor body in any span, metric or event', () => {
    expect(spans.some((span) => span.events.some((event) => event.name === 'exception'))).toBe(true);
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

  it('records a handler skipped on the re-send as an event of its notification span, and counts it', () => {
    const skipped = spans
      .filter((span) => span.name === 'payouts.notification')
      .flatMap((span) => span.events.filter((event) => event.name === 'payouts.handler.skipped'));
    expect(skipped.map((event) => event.attributes)).toEqual([{ 'payouts.handler.name': 'AuditTrail.record' }]);
    const skips = metrics.find((metric) => metric.descriptor.name === 'payouts.notification.handler.skips');
    expect(skips?.dataPoints.map(({ attributes, value }) => [attributes, value])).toEqual([
      [
        {
          'payouts.account': 'default',
          'payouts.notification.event_type': 'PAYMENT_METHOD_ADDED',
          'payouts.handler.name': 'AuditTrail.record',
        },
        1,
      ],
    ]);
  });

  it('records the metrics of docs/observability.md, each with exactly its documented attribute keys', () => {
    const documented = documentedTable('**Metrics**', 3);
    const recorded = new Map(
      metrics.map(({ descriptor, dataPoints }) => [
        descriptor.name,
        [...new Set(dataPoints.flatMap(({ attributes }) => Object.keys(attributes)))].sort(),
      ]),
    );
    expect(documented.size).toBe(7);
    expect(recorded).toEqual(new Map([...documented].map(([name, keys]) => [name, [...keys].sort()])));
  });

  it('records on each span exactly the attribute keys docs/observability.md lists for it', () => {
    const documented = documentedTable('**Spans**', 3);
    const ours = spans.filter((span) => span.name.startsWith('payouts.'));
    const recorded = new Map<string, Set<string>>();
    for (const span of ours) {
      const name = span.name.startsWith('payouts.handler ') ? 'payouts.handler ' : span.name;
      const keys = recorded.get(name) ?? new Set();
      for (const key of Object.keys(span.attributes)) keys.add(key);
      recorded.set(name, keys);
    }
    expect(new Map([...recorded].map(([name, keys]) => [name, [...keys].sort()]))).toEqual(
      new Map([...documented].map(([name, keys]) => [name, [...keys].sort()])),
    );
  });
});
