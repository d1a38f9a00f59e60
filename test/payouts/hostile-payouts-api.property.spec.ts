import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError } from 'nestjs-payouts';
import { PayoutsApiError } from 'nestjs-payouts';
import { PayoutsError } from 'nestjs-payouts';
import { RecordingLogger } from '../recording-logger.js';
import {
  compressionBomb,
  ENCODINGS,
  type Encoding,
  type HostilePlan,
  hostileReply,
  type ResetStage,
} from './hostile-replies.js';
import { PayoutsApiStub, type RecordedRequest } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { ACCESS_TOKEN, API_KEY, type PayoutsTestApp, startPayoutsAppFor } from './payouts-test-app.js';
import { errorRenderings } from './error-renderings.js';

/*
 * createPayout against a payouts API that misbehaves in every way a network or a hostile server can: slow drips,
 * resets at every stage, huge and compressed replies (bombs included), undecodable bytes, echoed credentials,
 * redirects. Oracle, from the documented "Input limits", "Retry policy" and "Errors": every call settles, in no more
 * attempts than documented (each bounded by timeoutMs, so within the documented whole-call bound), with the error
 * class the reply calls for, keeping at most maxResponseBytes of a reply, and with no credential anywhere in the
 * error or the logs.
 */

// Long enough that an honest reply always arrives on a busy machine, short enough to keep the drips quick.
const TIMEOUT_MS = 500;
const CAP = 8192;
const MAX_RETRIES = 1;
const RUNS = { seed: 20_261_123, numRuns: 150, interruptAfterTimeLimit: 60_000 };

type BodyKind =
  | { kind: 'empty' }
  | { kind: 'json'; value: unknown }
  | { kind: 'echo'; form: 'plain' | 'nested' | 'escaped' | 'percent' | 'key' | 'text' }
  | { kind: 'deep-echo'; depth: number }
  | { kind: 'huge'; size: number }
  | { kind: 'cut-echo'; before: number }
  | { kind: 'bytes'; bytes: Uint8Array };

interface Scenario {
  status: number;
  body: BodyKind;
  encoding: 'identity' | Encoding | 'corrupt' | 'bomb';
  echoHeaders: boolean;
  reset: ResetStage | undefined;
  drip: HostilePlan['drip'];
}

const scenarios: fc.Arbitrary<Scenario> = fc.record({
  status: fc.constantFrom(200, 201, 202, 301, 302, 307, 308, 400, 401, 404, 409, 422, 429, 500, 502, 503),
  body: fc.oneof(
    fc.constant<BodyKind>({ kind: 'empty' }),
    fc.jsonValue({ maxDepth: 3 }).map((value): BodyKind => ({ kind: 'json', value })),
    fc
      .constantFrom('plain', 'nested', 'escaped', 'percent', 'key', 'text')
      .map((form): BodyKind => ({ kind: 'echo', form })),
    fc.integer({ min: 65, max: 2000 }).map((depth): BodyKind => ({ kind: 'deep-echo', depth })),
    fc.integer({ min: CAP + 1, max: 4 * CAP }).map((size): BodyKind => ({ kind: 'huge', size })),
    fc.integer({ min: 1, max: 40 }).map((before): BodyKind => ({ kind: 'cut-echo', before })),
    fc.uint8Array({ maxLength: 300 }).map((bytes): BodyKind => ({ kind: 'bytes', bytes })),
  ),
  encoding: fc.oneof(
    { weight: 4, arbitrary: fc.constant('identity' as const) },
    { weight: 3, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'corrupt', 'bomb') },
  ),
  echoHeaders: fc.boolean(),
  reset: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom<ResetStage>('before-head', 'mid-head', 'after-head', 'mid-body') },
  ),
  drip: fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.record({
        bytes: fc.integer({ min: 1, max: 512 }),
        everyMs: fc.integer({ min: 10, max: 60 }),
        from: fc.constantFrom('head', 'body') as fc.Arbitrary<'head' | 'body'>,
      }),
    },
  ),
});

/** Every character as a JSON `\uXXXX` escape. */
const jsonEscaped = (text: string) =>
  [...text].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

/** The body bytes before encoding, echoing the credentials the request carried. */
function decodedBody(body: BodyKind, apiKey: string, token: string): Buffer {
  switch (body.kind) {
    case 'empty':
      return Buffer.alloc(0);
    case 'json':
      return Buffer.from(JSON.stringify(body.value) ?? 'null');
    case 'echo': {
      const forms = {
        plain: JSON.stringify({ received: { 'x-api-key': apiKey, authorization: `Bearer ${token}` } }),
        nested: JSON.stringify({ a: [[{ b: [apiKey, { c: token }] }]] }),
        escaped: `{"key":"${jsonEscaped(apiKey)}","token":"${jsonEscaped(token)}"}`,
        percent: JSON.stringify({
          url: `https://x.example/?k=${encodeURIComponent(apiKey)}&t=${encodeURIComponent(token)}`,
        }),
        key: `{"${apiKey}":1,"${jsonEscaped(token)}":2}`,
        text: `api key ${apiKey}, token ${token}, escaped ${jsonEscaped(apiKey)}`,
      };
      return Buffer.from(forms[body.form]);
    }
    case 'deep-echo':
      return Buffer.from(`${'['.repeat(body.depth)}"${jsonEscaped(apiKey)}","${token}"${']'.repeat(body.depth)}`);
    case 'huge':
      return Buffer.from(JSON.stringify({ filler: 'z'.repeat(body.size), apiKey, token }));
    case 'cut-echo':
      // The cap falls inside the API key: `before` characters of it fit.
      return Buffer.from(`${'f'.repeat(CAP - body.before)}${apiKey}${token}`);
    case 'bytes':
      return Buffer.from(body.bytes);
  }
}

const bombs = new Map<Encoding, ReturnType<typeof compressionBomb>>();
const BOMB_SIZE = 1024 * 1024;

interface Played {
  plan: HostilePlan;
  /** Body bytes once decoded. */
  decodedSize: number;
}

/** The reply to play for one request, and what its body amounts to once decoded. */
function planFor(scenario: Scenario, request: RecordedRequest): Played {
  const apiKey = String(request.headers['x-api-key']);
  const token = String(request.headers.authorization).replace(/^Bearer /, '');
  const headers: Record<string, string> = scenario.echoHeaders
    ? {
        'x-echo-key': apiKey,
        'x-echo-authorization': `Bearer ${token}`,
        location: `/elsewhere?key=${encodeURIComponent(apiKey)}&t=${token}`,
      }
    : {};
  const common = { status: scenario.status, reset: scenario.reset, drip: scenario.drip };
  if (scenario.encoding === 'bomb') {
    const encoding = (['gzip', 'deflate', 'br'] as const)[scenario.status % 3]!;
    if (!bombs.has(encoding)) bombs.set(encoding, compressionBomb(encoding, BOMB_SIZE));
    const bomb = bombs.get(encoding)!;
    return { plan: { ...common, headers: { ...headers, ...bomb.headers }, body: bomb.body }, decodedSize: BOMB_SIZE };
  }
  const body = decodedBody(scenario.body, apiKey, token);
  if (scenario.encoding === 'identity') return { plan: { ...common, headers, body }, decodedSize: body.length };
  if (scenario.encoding === 'corrupt') {
    return { plan: { ...common, headers: { ...headers, 'content-encoding': 'gzip' }, body }, decodedSize: body.length };
  }
  const encoded = ENCODINGS[scenario.encoding](body);
  return {
    plan: { ...common, headers: { ...headers, 'content-encoding': scenario.encoding }, body: encoded },
    decodedSize: body.length,
  };
}

interface TestApp {
  started: PayoutsTestApp;
  logger: RecordingLogger;
  /** Tokens the app's access-token function has handed out (none for a fixed token). */
  issued: string[];
  refreshable: boolean;
}

const isSuccess = (status: number) => status >= 200 && status < 300;

describe('createPayout against a hostile payouts API (property)', () => {
  let stub: PayoutsApiStub;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    stub = await PayoutsApiStub.start();
    const options = {
      timeoutMs: TIMEOUT_MS,
      maxResponseBytes: CAP,
      retries: { maxRetries: MAX_RETRIES, baseDelayMs: 1, maxDelayMs: 5 },
    };
    for (const refreshable of [false, true]) {
      const logger = new RecordingLogger();
      const issued: string[] = [];
      const accessToken = refreshable
        ? () => {
            issued.push(`fn-token-${issued.length + 1}-7d3a9c`);
            return issued.at(-1)!;
          }
        : ACCESS_TOKEN;
      apps.push({
        started: await startPayoutsAppFor(stub.baseUrl, { ...options, accessToken }, logger),
        logger,
        issued,
        refreshable,
      });
    }
  });

  afterAll(async () => {
    for (const { started } of apps) await started.app.close();
    await stub.close();
  });

  it('settles every call within its documented attempts, with the right error and no credential in it', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, fc.boolean(), async (scene, useFunction) => {
        const app = apps[useFunction ? 1 : 0]!;
        const played: Played[] = [];
        stub.requests.length = 0;
        stub.handle((request) => {
          played.push(planFor(scene, request));
          return hostileReply(played.at(-1)!.plan);
        });
        const logLines = app.logger.lines.length;

        const outcome = await app.started.payouts.createPayout(walletPayoutRequest('req_hostile')).then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );

        const attempts = stub.requests.length;
        expect(attempts).toBeGreaterThanOrEqual(1);
        expect(attempts).toBeLessThanOrEqual(1 + MAX_RETRIES + (app.refreshable ? 1 : 0));
        // Redirects are never followed: every request went to the payouts endpoint.
        expect(new Set(stub.requests.map(({ path }) => path))).toEqual(new Set(['/payouts']));
        const { plan, decodedSize } = played[0]!;
        const fitsCap = decodedSize <= CAP;
        // A reset after the head of a reply without body bytes cuts nothing.
        const cutByReset =
          scene.reset !== undefined &&
          !(plan.body!.length === 0 && (scene.reset === 'after-head' || scene.reset === 'mid-body'));

        if ('result' in outcome) {
          expect(isSuccess(scene.status)).toBe(true);
          expect(outcome.result.status).toBe(scene.status);
          expect(fitsCap && !cutByReset && scene.encoding !== 'corrupt').toBe(true);
          return;
        }
        const { error } = outcome;
        expect(error).toBeInstanceOf(PayoutsError);
        const secrets = [API_KEY, ACCESS_TOKEN, ...app.issued];
        for (const text of [...errorRenderings(error), ...app.logger.lines.slice(logLines)]) {
          for (const secret of secrets) expect(text).not.toContain(secret);
        }

        if (error instanceof PayoutOutcomeUnknownError) {
          if (error.status === undefined) {
            // No reply head: a reset (which may also discard a head the client had not read yet) or a drip.
            expect(cutByReset || scene.drip !== undefined).toBe(true);
          } else {
            // A 2xx whose body did not arrive whole: never handed over as a success.
            expect(error.status).toBe(scene.status);
            expect(isSuccess(error.status)).toBe(true);
            const expectedCodes = [
              ...(fitsCap ? [] : ['RESPONSE_TOO_LARGE']),
              ...(scene.drip ? ['ETIMEDOUT'] : []),
              ...(cutByReset || scene.encoding === 'corrupt' || !fitsCap ? [error.code] : []),
            ];
            expect(expectedCodes).toContain(error.code);
          }
          return;
        }

        expect(error).toBeInstanceOf(PayoutsApiError);
        const apiError = error as PayoutsApiError;
        expect(apiError.status).toBe(scene.status);
        expect(isSuccess(apiError.status)).toBe(false);
        const expectedAttempts =
          apiError.status === 401 && app.refreshable ? 2 : [429, 503].includes(apiError.status) ? 1 + MAX_RETRIES : 1;
        expect(attempts).toBe(expectedAttempts);
        if (apiError.bodyTruncated) {
          expect(typeof apiError.body).toBe('string');
          expect(Buffer.byteLength(apiError.body as string)).toBeLessThanOrEqual(CAP);
          expect(!fitsCap || cutByReset || scene.encoding === 'corrupt' || scene.drip !== undefined).toBe(true);
        } else {
          expect(fitsCap).toBe(true);
          expect(scene.encoding).not.toBe('corrupt');
        }
        // Kept whole or not, the error serialises: no body nests deep enough to break JSON.stringify.
        expect(() => JSON.stringify(apiError)).not.toThrow();
      }),
      RUNS,
    );
  }, 90_000);
});
