import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from './notification-handlers.fixture.js';
import { expectedReply, isValidNotification, type RouteInput } from './notification-route-oracle.js';
import {
  type AdapterName,
  ADAPTERS,
  type NotificationsApp,
  post,
  startNotificationsApp,
} from './notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

/*
 * The route against generated requests and byte-level mutations, over real HTTP on each adapter, held to an oracle
 * written from the documented rules: never a 5xx for bad input, never an ack for invalid input, an ack for every valid
 * one, the handler never sees an invalid notification nor one twice, the process never crashes, and no prototype is
 * polluted. Fixed seeds, a bounded number of cases and a time limit keep it reproducible and short.
 */

const SECRET = 'property-secret-1f7c';
const PATH = 'payouts/notifications';
const ACK = '{"ResultCode":0}';
const BODY_LIMIT_BYTES = 4096;
const CASES = 300;
const TIME_LIMIT_MS = 12_000;

// Field values: mostly valid, often odd (any code point, lone surrogates, separators, long), sometimes another type.
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));
const oddString = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.string({ unit: fc.oneof(loneSurrogate, fc.constantFrom('a', '\ufffd', '%', ':', '\u0000', '"')), maxLength: 6 }),
  fc.constantFrom('', ' ', 'x'.repeat(400)),
);
const otherType = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.constant([]), fc.constant({}));
const mostly = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 24, arbitrary: valid }, { weight: 2, arbitrary: oddString }, { weight: 1, arbitrary: otherType });

const id = (prefix: string) => fc.integer({ min: 0, max: 40 }).map((n) => `${prefix}_${n}`);
const key = fc.oneof(
  { weight: 12, arbitrary: fc.string({ maxLength: 5 }) },
  { weight: 2, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString') },
);
const deepArrays = fc
  .integer({ min: 1, max: 2500 })
  .map((depth) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown);
const unknownValue = fc.oneof(
  { weight: 8, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: deepArrays },
  { weight: 1, arbitrary: fc.record({ prototype: fc.record({ polluted: fc.constant(true) }) }) },
  { weight: 1, arbitrary: fc.record({ polluted: fc.constant(true) }) },
);
/** Unknown fields, built with `defineProperty` by fast-check, so a `__proto__` key is an own key as JSON.parse makes. */
const unknownFields = fc.dictionary(key, unknownValue, { maxKeys: 2 });

const card = fc.record({
  lastFour: mostly(fc.constantFrom('4242', '0005')),
  expirationMonth: mostly(fc.constantFrom('01', '08', '12')),
  expirationYear: mostly(fc.constantFrom('2031', '2029')),
});
const notification = fc
  .record({
    eventType: mostly(fc.constantFrom('PAYMENT_METHOD_ADDED', 'PAYMENT_METHOD_REMOVED', 'PAYMENT_METHOD_EXPIRED')),
    timestamp: mostly(fc.constantFrom('2025-03-14T09:26:53.589Z', '2025-03-14T09:26:53Z', '2025-03-14')),
    shopper: fc.tuple(
      fc.record(
        {
          id: mostly(id('shp')),
          partner_shopper_id: mostly(fc.constant('merchant-42')),
          email: mostly(fc.emailAddress()),
        },
        { requiredKeys: ['id'] },
      ),
      unknownFields,
    ),
    paymentMethod: fc.tuple(
      fc.record(
        { id: mostly(id('pmt')), type: mostly(fc.constantFrom('card', 'wallet')), card: mostly(card) },
        { requiredKeys: ['id', 'type'] },
      ),
      unknownFields,
    ),
    extra: unknownFields,
  })
  .map(({ extra, shopper, paymentMethod, ...fields }) => {
    const body = Object.assign(Object.create(null) as object, extra, fields, {
      shopper: Object.assign(Object.create(null) as object, shopper[1], shopper[0]),
      paymentMethod: Object.assign(Object.create(null) as object, paymentMethod[1], paymentMethod[0]),
    });
    return Buffer.from(JSON.stringify(body));
  });

/** Byte-level edits of a body: replaced, inserted (invalid UTF-8, quotes and brackets included), deleted, cut. */
const byte = fc.oneof(
  fc.integer({ min: 0, max: 255 }),
  fc.constantFrom(0x22, 0x7b, 0x7d, 0x5b, 0x5d, 0x5c, 0x2c, 0x3a),
);
const edit = fc.oneof(
  fc.record({
    kind: fc.constant('replace' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    bytes: fc.array(byte, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    bytes: fc.array(byte, { minLength: 1, maxLength: 4 }),
  }),
  fc.record({
    kind: fc.constant('delete' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    bytes: fc.constant([]),
  }),
  fc.record({
    kind: fc.constant('cut' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    bytes: fc.constant([]),
  }),
);
const mutated = fc.tuple(notification, fc.array(edit, { minLength: 1, maxLength: 3 })).map(([body, edits]) =>
  edits.reduce((bytes, { kind, at, bytes: inserted }) => {
    const index = Math.floor(at * bytes.length);
    const added = Buffer.from(inserted);
    if (kind === 'cut') return bytes.subarray(0, index);
    if (kind === 'delete') return Buffer.concat([bytes.subarray(0, index), bytes.subarray(index + 1)]);
    if (kind === 'insert') return Buffer.concat([bytes.subarray(0, index), added, bytes.subarray(index)]);
    return Buffer.concat([bytes.subarray(0, index), added, bytes.subarray(index + added.length)]);
  }, body),
);

const envelope = {
  token: fc.constantFrom<RouteInput['token']>('right', 'right', 'right', 'right', 'wrong', 'missing'),
  contentType: fc.oneof(
    { weight: 12, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'application/json; charset=utf-8',
        'Application/JSON',
        'application/json; charset=latin1',
        'text/plain',
        undefined,
      ),
    },
  ),
  contentEncoding: fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('gzip', 'identity', 'x-custom') },
  ),
  chunked: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
};
const generated = fc.record({ body: notification, ...envelope });
const mutations = fc.record({ body: mutated, ...envelope });

describe('the notification route against generated and mutated requests', () => {
  const apps = new Map<AdapterName, NotificationsApp>();
  // Nest's static logger serves every app of the process, so one logger records both.
  const logger = new RecordingLogger();
  const prototypeNames = Object.getOwnPropertyNames(Object.prototype).sort();
  /** What the package logged at ERROR: a handler failure or a crash of the route would be. */
  const packageErrors = () =>
    logger.lines.filter((line) => line.startsWith('error:') && line.endsWith('PayoutsNotifications'));

  beforeAll(async () => {
    for (const adapter of ADAPTERS) {
      const app = await startNotificationsApp({
        adapter,
        logger,
        notifications: { verification: { secret: { value: SECRET } }, bodyLimitBytes: BODY_LIMIT_BYTES },
        providers: [AuditTrail],
      });
      apps.set(adapter, app);
    }
  });

  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.close()));
  });

  describe.each(ADAPTERS)('on %s', (adapter) => {
    const handledKeys = new Set<string>();

    async function expectReplyFollowsRules(input: RouteInput): Promise<void> {
      const app = apps.get(adapter)!;
      const trail = app.app.get(AuditTrail);
      const before = trail.received.length;
      const query = input.token === 'missing' ? '' : `?token=${input.token === 'right' ? SECRET : 'wrong'}`;
      const reply = await post(app.url(`${PATH}${query}`), input.body, {
        chunked: input.chunked,
        headers: { 'content-type': input.contentType, 'content-encoding': input.contentEncoding },
      });
      const seen = trail.received.slice(before).map((entry) => entry.notification);
      const expected = expectedReply(input, BODY_LIMIT_BYTES, adapter);

      expect(reply.status).toBeLessThan(500);
      for (const handled of seen) expect(isValidNotification(handled)).toBe(true);
      if (expected.ack) {
        expect(reply.status).toBe(200);
        expect(reply.body).toBe(ACK);
        expect(seen).toHaveLength(handledKeys.has(expected.key) ? 0 : 1);
        handledKeys.add(expected.key);
      } else {
        expect(expected.statuses).toContain(reply.status);
        expect(reply.body).not.toBe(ACK);
        expect(seen).toEqual([]);
      }
    }

    it.each([
      ['generated notifications', generated, 20_261_123],
      ['byte-level mutations of notifications', mutations, 20_261_124],
    ] as const)('holds for %s', { timeout: TIME_LIMIT_MS + 10_000 }, async (_kind, requests, seed) => {
      await fc.assert(fc.asyncProperty(requests, expectReplyFollowsRules), {
        seed,
        numRuns: CASES,
        interruptAfterTimeLimit: TIME_LIMIT_MS,
      });
      expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeNames);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
      expect(packageErrors()).toEqual([]);
    });

    it('still acknowledges a valid notification afterwards', async () => {
      const body = Buffer.from(
        JSON.stringify({
          eventType: 'PAYMENT_METHOD_REMOVED',
          timestamp: new Date().toISOString(),
          shopper: { id: 'shp_after' },
          paymentMethod: { id: 'pmt_after', type: 'card' },
        }),
      );
      await expectReplyFollowsRules({
        body,
        token: 'right',
        contentType: 'application/json',
        contentEncoding: undefined,
        chunked: false,
      });
    });
  });
});
