import { request as httpRequest } from 'node:http';
import { AssertionError } from 'node:assert';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import { MockFault, MockPayoutsApi, type MockPayoutsApiOptions } from 'nestjs-payouts/testing';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';

const API_KEY = 'mock-test-api-key-7c1d';
const ACCESS_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtb2NrIn0.mock-token-3e9b';

type Sent =
  { status: number; headers: Record<string, string | string[] | undefined>; text: string } | { error: string };

interface SendOptions {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** Sent as JSON unless a string. */
  body?: unknown;
}

/** One request over a fresh connection; a connection that ends without a reply resolves with its error code. */
function send(mock: MockPayoutsApi, options: SendOptions = {}): Promise<Sent> {
  const { method = 'POST', path = '/payouts', body = walletPayoutRequest() } = options;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers = {
    'x-api-key': API_KEY,
    authorization: `Bearer ${ACCESS_TOKEN}`,
    'content-type': 'application/json',
    ...options.headers,
  };
  return new Promise((resolve) => {
    const request = httpRequest(`${mock.baseUrl}${path}`, { method, headers, agent: false }, (response) => {
      let received = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (received += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text: received }));
      response.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    request.end(text);
  });
}

function replied(sent: Sent): { status: number; headers: Record<string, string | string[] | undefined>; text: string } {
  if ('error' in sent) throw new Error(`expected a reply, got ${sent.error}`);
  return sent;
}

describe('MockPayoutsApi', () => {
  let mock: MockPayoutsApi;

  async function start(options: MockPayoutsApiOptions = {}): Promise<MockPayoutsApi> {
    mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN, ...options });
    return mock;
  }

  afterEach(async () => {
    await mock?.close();
  });

  describe('the usual answers', () => {
    it('creates a payout for a valid request, and gives the same payout back for a repeated request_id', async () => {
      await start();
      expect(mock.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      const first = replied(await send(mock));
      const again = replied(await send(mock));

      expect(first.status).toBe(201);
      expect(first.headers['content-type']).toBe('application/json');
      const payout = JSON.parse(first.text);
      expect(payout).toEqual({
        id: expect.stringMatching(/^po_[0-9a-f]{16}$/),
        status: 'pending',
        request_id: 'req_0001',
        amount: { value: '125.50', currency_code: 'KES' },
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      expect(again.status).toBe(200);
      expect(JSON.parse(again.text)).toEqual(payout);
      expect([...mock.payouts.values()]).toEqual([payout]);
      expect(mock.calls.map((call) => [call.status, call.committed])).toEqual([
        [201, true],
        [200, false],
      ]);
    });

    it('records each request with its parsed body and request_id, and the credentials hidden', async () => {
      await start();

      await send(mock, { headers: { 'x-extra': 'kept' } });

      expect(mock.calls).toHaveLength(1);
      const [call] = mock.calls;
      expect(call).toEqual({
        index: 0,
        receivedAt: expect.any(Date),
        method: 'POST',
        path: '/payouts',
        headers: expect.objectContaining({
          'x-api-key': '[redacted]',
          authorization: '[redacted]',
          'content-type': 'application/json',
          'x-extra': 'kept',
        }),
        body: walletPayoutRequest(),
        requestId: 'req_0001',
        credentials: { apiKey: 'valid', accessToken: 'valid' },
        fault: undefined,
        status: 201,
        replyBody: mock.payouts.get('req_0001'),
        reset: false,
        committed: true,
      });
      expect(JSON.stringify(mock.calls)).not.toContain(API_KEY);
      expect(JSON.stringify(mock.calls)).not.toContain(ACCESS_TOKEN);
      expect(mock.callsFor('req_0001')).toEqual([call]);
      expect(mock.callsFor('req_other')).toEqual([]);
    });

    it.each([
      ['no X-API-Key', { 'x-api-key': '' }, 'missing_api_key', { apiKey: 'missing', accessToken: 'valid' }],
      ['a wrong X-API-Key', { 'x-api-key': 'wrong-key' }, 'invalid_api_key', { apiKey: 'wrong', accessToken: 'valid' }],
      ['no Authorization', { authorization: '' }, 'missing_access_token', { apiKey: 'valid', accessToken: 'missing' }],
      [
        'a wrong token',
        { authorization: 'Bearer wrong-token' },
        'invalid_access_token',
        { apiKey: 'valid', accessToken: 'wrong' },
      ],
      [
        'the token without Bearer',
        { authorization: ACCESS_TOKEN },
        'invalid_access_token',
        { apiKey: 'valid', accessToken: 'wrong' },
      ],
    ])('answers 401 to %s and creates nothing', async (_case, headers, error, credentials) => {
      await start();

      const sent = replied(await send(mock, { headers }));

      expect(sent.status).toBe(401);
      expect(JSON.parse(sent.text)).toEqual({ error });
      expect(mock.payouts.size).toBe(0);
      expect(mock.calls[0]).toMatchObject({ credentials, status: 401, committed: false });
    });

    it('tells onCall of each call once answered or reset', async () => {
      const heard: [number | undefined, boolean][] = [];
      await start({ onCall: (call) => heard.push([call.status, call.reset]) });
      mock.fail({ nth: 2 }, MockFault.resetBeforeCommit());

      await send(mock);
      await send(mock);

      expect(heard).toEqual([
        [201, false],
        [undefined, true],
      ]);
    });

    it('accepts the tokens a function says are valid', async () => {
      await start({ accessToken: (token) => token.startsWith('rotating-') });

      expect(mock.accessToken).toBeUndefined();
      expect(replied(await send(mock, { headers: { authorization: 'Bearer rotating-1' } })).status).toBe(201);
      expect(replied(await send(mock, { headers: { authorization: 'Bearer stale-1' } })).status).toBe(401);
    });

    it('makes up credentials when none are given', async () => {
      mock = await MockPayoutsApi.start();

      expect(mock.apiKey).toMatch(/^sk_test_[0-9a-f]{24}$/);
      expect(mock.accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const sent = await send(mock, {
        headers: { 'x-api-key': mock.apiKey, authorization: `Bearer ${mock.accessToken}` },
      });
      expect(replied(sent).status).toBe(201);
    });

    it('answers 400 naming every invalid field, and creates nothing', async () => {
      await start();
      const body = { ...walletPayoutRequest(), amount: { value: '12,50', currency_code: 'kes' }, country_code: 'KEN' };
      delete (body as Partial<typeof body>).reference;

      const sent = replied(await send(mock, { body }));

      expect(sent.status).toBe(400);
      expect(JSON.parse(sent.text)).toEqual({
        error: 'invalid_request',
        problems: [
          'amount.value: expected a decimal string such as "125.50"',
          'amount.currency_code: expected a three-letter code',
          'country_code: expected a two-letter code',
          'reference: expected a non-empty string',
        ],
      });
      expect(mock.payouts.size).toBe(0);
    });

    it('looks a payout up by its request_id, percent-encoded in the path, or by its own id', async () => {
      await start();
      const requestId = 'run 7/req é%1';
      const created = JSON.parse(replied(await send(mock, { body: walletPayoutRequest(requestId) })).text);
      const get = (path: string) => send(mock, { method: 'GET', path, body: '' });

      const byRequestId = replied(await get(`/payouts/${encodeURIComponent(requestId)}`));
      const byId = replied(await get(`/payouts/${created.id}`));
      const missing = replied(await get('/payouts/po_0000000000000000'));

      expect([byRequestId.status, JSON.parse(byRequestId.text)]).toEqual([200, created]);
      expect([byId.status, JSON.parse(byId.text)]).toEqual([200, created]);
      expect([missing.status, JSON.parse(missing.text)]).toEqual([404, { error: 'payout_not_found' }]);
      expect(mock.calls.map((call) => call.status)).toEqual([201, 200, 200, 404]);
    });

    it.each(['%ZZ', '%', 'a%2', '%E0%A4%A', '%C0%AF'])(
      'answers 400 for the id %j, which is not valid percent-encoding, never 500 or a "not found"',
      async (id) => {
        await start();

        const sent = replied(await send(mock, { method: 'GET', path: `/payouts/${id}`, body: '' }));

        expect([sent.status, JSON.parse(sent.text)]).toEqual([
          400,
          { error: 'invalid_path', problems: ['the id after /payouts/ is not valid percent-encoding'] },
        ]);
      },
    );

    it.each([
      ['a body that is not JSON', { body: '{"request_id":' }, 400, { error: 'invalid_json' }],
      ['another media type', { headers: { 'content-type': 'text/plain' } }, 415, { error: 'unsupported_media_type' }],
      ['a body above 64 KiB', { body: { big: 'x'.repeat(70_000) } }, 413, { error: 'payload_too_large' }],
      ['another path', { path: '/payments' }, 404, { error: 'not_found' }],
      ['another method', { method: 'PUT' }, 405, { error: 'method_not_allowed' }],
    ])('answers %s as an API would', async (_case, options: SendOptions, status, error) => {
      await start();

      const sent = replied(await send(mock, options));

      expect(sent.status).toBe(status);
      expect(JSON.parse(sent.text)).toEqual(error);
      expect(mock.calls[0]?.status).toBe(status);
    });
  });

  describe('faults', () => {
    it('replies with a status and body of the test', async () => {
      await start();
      mock.fail({ times: 1 }, MockFault.status(422, { error: 'beneficiary_blocked' }, { 'X-Trace': 'abc' }));

      const failed = replied(await send(mock));
      const next = replied(await send(mock));

      expect(failed.status).toBe(422);
      expect(failed.headers['x-trace']).toBe('abc');
      expect(JSON.parse(failed.text)).toEqual({ error: 'beneficiary_blocked' });
      expect(next.status).toBe(201);
      expect(mock.calls.map((call) => [call.fault, call.status, call.committed])).toEqual([
        ['status', 422, false],
        [undefined, 201, true],
      ]);
    });

    it.each([
      ['rateLimited', MockFault.rateLimited(2), 429, '2', 'rate_limited'],
      [
        'unavailable',
        MockFault.unavailable('Wed, 21 Oct 2065 07:28:00 GMT'),
        503,
        'Wed, 21 Oct 2065 07:28:00 GMT',
        'service_unavailable',
      ],
    ])('%s answers with Retry-After and creates nothing', async (_name, fault, status, retryAfter, error) => {
      await start();
      mock.fail({}, fault);

      const sent = replied(await send(mock));

      expect(sent.status).toBe(status);
      expect(sent.headers['retry-after']).toBe(retryAfter);
      expect(JSON.parse(sent.text)).toEqual({ error });
      expect(mock.payouts.size).toBe(0);
    });

    it('holds the answer back for the latency, then answers as usual', async () => {
      await start();
      mock.fail({ times: 1 }, MockFault.latency(60_000));

      const pending = send(mock);
      await expect.poll(() => mock.calls.length).toBe(1);
      expect(mock.calls[0]).toMatchObject({ fault: 'latency', status: undefined, committed: false });
      await mock.close();

      expect(await pending).toEqual({ error: 'ECONNRESET' });
      expect(mock.calls[0]?.status).toBeUndefined();
    });

    it('plays the fault given after the latency', async () => {
      await start();
      mock.fail({ times: 1 }, MockFault.latency(20, MockFault.unavailable(1)));

      expect(replied(await send(mock)).status).toBe(503);
      expect(replied(await send(mock)).status).toBe(201);
      expect(mock.calls.map((call) => call.fault)).toEqual(['latency', undefined]);
    });

    it('resets the connection before committing: nothing is created', async () => {
      await start();
      mock.fail({ times: 1 }, MockFault.resetBeforeCommit());

      expect(await send(mock)).toEqual({ error: 'ECONNRESET' });
      expect(mock.payouts.size).toBe(0);
      expect(mock.calls[0]).toMatchObject({
        fault: 'reset-before-commit',
        status: undefined,
        reset: true,
        committed: false,
      });
    });

    it('resets the connection after committing: the payout exists, and a retry gets it back', async () => {
      await start();
      mock.fail({ times: 1 }, MockFault.resetAfterCommit());

      expect(await send(mock)).toEqual({ error: 'ECONNRESET' });
      expect(mock.payouts.get('req_0001')).toMatchObject({ request_id: 'req_0001', status: 'pending' });
      expect(mock.calls[0]).toMatchObject({
        fault: 'reset-after-commit',
        status: undefined,
        reset: true,
        committed: true,
      });
      const again = replied(await send(mock));
      expect(again.status).toBe(200);
      expect(JSON.parse(again.text).id).toBe(mock.payouts.get('req_0001')?.id);
    });

    it('sends a malformed reply after committing', async () => {
      await start();
      mock.fail({ times: 1 }, MockFault.malformedReply());

      const sent = replied(await send(mock));

      expect(sent.status).toBe(201);
      expect(sent.headers['content-type']).toBe('application/json');
      expect(sent.text.startsWith('{"id":"po_')).toBe(true);
      expect(() => JSON.parse(sent.text)).toThrow(SyntaxError);
      expect(mock.payouts.size).toBe(1);
      expect(mock.calls[0]).toMatchObject({ fault: 'malformed-reply', status: 201, committed: true });
    });

    it('answers 401 once for an expired token, then as usual', async () => {
      await start();
      const rule = mock.fail({ times: 1 }, MockFault.tokenExpired());

      const expired = replied(await send(mock));
      const next = replied(await send(mock));

      expect(expired.status).toBe(401);
      expect(expired.headers['www-authenticate']).toBe(
        'Bearer error="invalid_token", error_description="The token expired"',
      );
      expect(JSON.parse(expired.text)).toEqual({ error: 'token_expired' });
      expect(next.status).toBe(201);
      expect(rule.fired).toBe(1);
      expect(mock.calls.map((call) => [call.fault, call.status])).toEqual([
        ['token-expired', 401],
        [undefined, 201],
      ]);
    });
  });

  describe('fault rules', () => {
    async function statusesOf(
      count: number,
      requestId: (index: number) => string = (i) => `req_${i}`,
    ): Promise<number[]> {
      const statuses: number[] = [];
      for (let index = 1; index <= count; index++) {
        statuses.push(replied(await send(mock, { body: walletPayoutRequest(requestId(index)) })).status);
      }
      return statuses;
    }

    it('picks the request carrying a request_id, as many times as told', async () => {
      await start();
      mock.fail({ times: 2, when: { requestId: 'req_2' } }, MockFault.unavailable(1));

      expect(await statusesOf(3, (i) => `req_${Math.min(i, 2)}`)).toEqual([201, 503, 503]);
      expect(replied(await send(mock, { body: walletPayoutRequest('req_2') })).status).toBe(201);
    });

    it('picks the nth request only, and every nth request', async () => {
      await start();
      mock.fail({ nth: 2 }, MockFault.rateLimited(1));
      mock.fail({ every: 3 }, MockFault.unavailable(1));

      expect(await statusesOf(7)).toEqual([201, 429, 503, 201, 201, 503, 201]);
    });

    it('counts a request for every rule it matches, though only the first rule plays its fault', async () => {
      await start();
      const first = mock.fail({ nth: 2 }, MockFault.rateLimited(1));
      const second = mock.fail({ nth: 2 }, MockFault.unavailable(1));

      expect(await statusesOf(3)).toEqual([201, 429, 201]);
      expect([first.fired, second.fired]).toEqual([1, 0]);
    });

    it('picks by method, path or a function of the request', async () => {
      await start();
      mock.fail({ when: { method: 'put' } }, MockFault.status(409));
      mock.fail(
        { when: (request) => (request.body as { amount?: { value?: string } }).amount?.value === '13.00' },
        MockFault.status(418),
      );

      expect(replied(await send(mock, { method: 'PUT' })).status).toBe(409);
      const unlucky = { ...walletPayoutRequest('req_13'), amount: { value: '13.00', currency_code: 'KES' } };
      expect(replied(await send(mock, { body: unlucky })).status).toBe(418);
      expect(replied(await send(mock)).status).toBe(201);
    });

    it('draws the same requests for the same seed, from those the rule matches', async () => {
      const picksFor = async (seed: number): Promise<number[]> => {
        await start();
        mock.fail({ probability: 0.2, seed, when: { method: 'POST' } }, MockFault.resetAfterCommit());
        const picked: number[] = [];
        for (let index = 0; index < 40; index++) {
          await send(mock, { method: index % 2 === 0 ? 'POST' : 'GET', body: walletPayoutRequest(`req_${index}`) });
        }
        for (const call of mock.calls) if (call.reset) picked.push(call.index);
        expect(mock.calls.filter((call) => call.method === 'GET').every((call) => !call.reset)).toBe(true);
        expect(mock.calls.filter((call) => call.reset).every((call) => call.committed)).toBe(true);
        await mock.close();
        return picked;
      };

      const first = await picksFor(7);
      const again = await picksFor(7);

      expect(first.length).toBeGreaterThan(0);
      expect(first.length).toBeLessThan(20);
      expect(again).toEqual(first);
    });

    it('plays no fault once removed, and none after reset()', async () => {
      await start();
      const rule = mock.fail({}, MockFault.unavailable(1));
      expect(replied(await send(mock)).status).toBe(503);
      rule.remove();
      expect(replied(await send(mock)).status).toBe(201);

      mock.fail({}, MockFault.unavailable(1));
      mock.reset();
      expect(mock.calls).toEqual([]);
      expect(mock.payouts.size).toBe(0);
      expect(replied(await send(mock)).status).toBe(201);
    });

    it('answers 500 with the message when a rule function throws', async () => {
      await start();
      mock.fail(
        {
          when: () => {
            throw new Error('bug in the test');
          },
        },
        MockFault.unavailable(1),
      );

      const sent = replied(await send(mock));

      expect(sent.status).toBe(500);
      expect(JSON.parse(sent.text)).toEqual({ error: 'mock_rule_failed', message: 'bug in the test' });
      expect(mock.calls[0]).toMatchObject({ status: 500, committed: false });
    });

    it('refuses a rule or a fault it cannot play', async () => {
      await start();

      expect(() => mock.fail({ nth: 0 }, MockFault.unavailable())).toThrow(
        'MockPayoutsApi.fail(): "nth" must be a whole number of at least 1; got 0',
      );
      expect(() => mock.fail({ probability: 1.5 }, MockFault.unavailable())).toThrow(
        '"probability" must be from 0 to 1',
      );
      expect(() => mock.fail({ time: 1 } as object, MockFault.unavailable())).toThrow('unknown rule field "time"');
      expect(() => mock.fail({}, { kind: 'explode' } as never)).toThrow(
        'the fault must be made by one of the MockFault functions',
      );
      expect(() => MockFault.status(99)).toThrow(RangeError);
      expect(() => MockFault.latency(-1)).toThrow(RangeError);
      // Node would fire a longer wait after 1 ms.
      expect(() => MockFault.latency(2 ** 31)).toThrow(
        'MockFault.latency(): the delay must be a whole number, 0 or more, of milliseconds up to 2147483647 (about 24 days); got 2147483648',
      );
    });
  });

  describe('assertNoSecretIn()', () => {
    it('finds the credentials, and any credential a request carried, without naming them', async () => {
      await start();
      await send(mock, { headers: { 'x-api-key': 'someone-elses-key' } });

      expect(() => mock.assertNoSecretIn(['all fine', 'POST /payouts 201'])).not.toThrow();
      for (const [output, name] of [
        [['fine', `key=${API_KEY}`], 'the API key appears in the output (line 2 of 2)'],
        [`token ${encodeURIComponent(ACCESS_TOKEN)}`, 'the access token appears in the output (line 1 of 1)'],
        [['x someone-elses-key'], 'a credential a request carried appears in the output (line 1 of 1)'],
      ] as const) {
        let thrown: unknown;
        try {
          mock.assertNoSecretIn(output);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(AssertionError);
        expect((thrown as Error).message).toBe(name);
        expect((thrown as Error).message).not.toContain(API_KEY);
      }
    });
  });

  describe('options and close()', () => {
    it('refuses an unknown or invalid option without echoing a credential', async () => {
      await expect(MockPayoutsApi.start({ latency: 5 } as MockPayoutsApiOptions)).rejects.toThrow(
        new PayoutsConfigError('latency', 'a known option name (did you mean "latencyMs"?)', 'MockPayoutsApi'),
      );
      await expect(MockPayoutsApi.start({ port: 70_000 })).rejects.toThrow('option "port" is invalid');
      await expect(MockPayoutsApi.start({ latencyMs: 2 ** 31 })).rejects.toThrow(
        new PayoutsConfigError(
          'latencyMs',
          'a whole number, 0 or more, of milliseconds up to 2147483647 (about 24 days)',
          'MockPayoutsApi',
        ),
      );
      const bad = MockPayoutsApi.start({ apiKey: 'has a space secret-9d' });
      await expect(bad).rejects.toThrow(PayoutsConfigError);
      await expect(bad).rejects.not.toThrow('secret-9d');
    });

    it('closes with a keep-alive connection open and an answer waiting, and closing twice is the same', async () => {
      await start({ latencyMs: 60_000 });
      const pending = send(mock);
      await expect.poll(() => mock.calls.length).toBe(1);

      const closing = mock.close();
      expect(mock.close()).toBe(closing);
      await closing;

      expect(await pending).toEqual({ error: 'ECONNRESET' });
      expect(await send(mock)).toEqual({ error: 'ECONNREFUSED' });
    });
  });
});
