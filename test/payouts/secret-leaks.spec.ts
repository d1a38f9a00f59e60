import axios from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutsError } from 'nestjs-payouts';
import type { PayoutsModuleOptions } from 'nestjs-payouts';
import { PayoutsApiError } from 'nestjs-payouts';
import { type PayoutsApiStub, refusingBaseUrl, type StubReply } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import {
  ACCESS_TOKEN,
  API_KEY,
  type PayoutsTestApp,
  startPayoutsAppFor,
  usePayoutsTestbed,
} from './payouts-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { errorRenderings } from './error-renderings.js';

const FRESH_TOKEN = 'fresh-token-from-function-e71b';
const TOKEN_ENDPOINT_SECRET = 'client-secret-used-by-token-function-40aa';
const PROXY_PASSWORD = 'proxy-password-6c0d31';
/** The proxy's credentials as axios sends them, `Proxy-Authorization: Basic <this>`. */
const PROXY_BASIC = Buffer.from(`egress:${PROXY_PASSWORD}`).toString('base64');
const SECRETS = [API_KEY, ACCESS_TOKEN, FRESH_TOKEN, TOKEN_ENDPOINT_SECRET, PROXY_PASSWORD, PROXY_BASIC];

/** Every character as a JSON `\uXXXX` escape: the same string once parsed, other bytes on the wire. */
const jsonEscaped = (text: string) =>
  [...text].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

/** A reply body of an API that echoes what it received, in every form a body can carry it. */
function echoingBody(...secrets: string[]): string {
  const [first] = secrets;
  return (
    `{"echo":{"headers":{"x-api-key":"${API_KEY}","authorization":"Bearer ${secrets.join(' ')}"}},` +
    `"nested":[[{"deep":[["${first}"]]}]],"${first}":"as a key","escaped":"${jsonEscaped(first!)}",` +
    `"${jsonEscaped(API_KEY)}":"escaped key","url":"https://x.example/?key=${encodeURIComponent(API_KEY)}"}`
  );
}

/** Headers echoing the credentials, as a redirect or a debugging proxy might. */
function echoingHeaders(token: string): Record<string, string> {
  return {
    'x-echo-api-key': API_KEY,
    'x-echo-authorization': `Bearer ${token}`,
    location: `https://elsewhere.example/payouts?api_key=${encodeURIComponent(API_KEY)}&token=${token}`,
  };
}

/** A forward proxy's error reply echoing the request it refused, headers and all, as some proxies do. */
const PROXY_ECHO: StubReply = {
  status: 407,
  headers: { 'x-echo-proxy-authorization': `Basic ${PROXY_BASIC}`, 'content-type': 'text/plain' },
  body: `Proxy-Authorization: Basic ${PROXY_BASIC}\nuser egress:${PROXY_PASSWORD}\nx-api-key: ${API_KEY}`,
};

/** Options that send plain-HTTP calls through the stub as a forward proxy that asks for credentials. */
function throughProxy(stub: PayoutsApiStub): Partial<PayoutsModuleOptions> & { baseUrl: string } {
  const { hostname, port } = new URL(stub.baseUrl);
  return {
    baseUrl: 'http://payouts.internal.example/v1',
    proxy: { host: hostname, port: Number(port), auth: { username: 'egress', password: PROXY_PASSWORD } },
  };
}

function expectNoSecret(texts: string[]): void {
  for (const text of texts) {
    for (const secret of SECRETS) {
      expect(text).not.toContain(secret);
    }
  }
}

interface ErrorPath {
  name: string;
  errorName: string;
  options: (stub: PayoutsApiStub) => Promise<Partial<PayoutsModuleOptions> & { baseUrl?: string }>;
  replies: StubReply[];
  request?: unknown;
}

const PATHS: ErrorPath[] = [
  { name: 'invalid request', errorName: 'PayoutValidationError', options: async () => ({}), replies: [], request: {} },
  {
    name: '401 with a fixed token',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [{ status: 401, body: {} }],
  },
  {
    name: '401 after a token refresh',
    errorName: 'PayoutsApiError',
    options: async () => ({ accessToken: async () => FRESH_TOKEN }),
    replies: [{ status: 401, body: {} }],
  },
  {
    name: '503 after every retry',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [{ status: 503, headers: { 'retry-after': '0' }, body: { error: 'down' } }],
  },
  {
    name: '500 echoing nothing',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [{ status: 500, body: 'oops' }],
  },
  {
    name: 'redirect',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [{ status: 302, headers: { location: '/x' } }],
  },
  {
    name: 'connection refused after retries',
    errorName: 'PayoutsNetworkError',
    options: async () => ({ baseUrl: await refusingBaseUrl() }),
    replies: [],
  },
  {
    name: 'error reply echoing the credentials in its body and headers',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [{ status: 400, headers: echoingHeaders(ACCESS_TOKEN), body: echoingBody(ACCESS_TOKEN) }],
  },
  {
    name: 'error reply echoing the fresh token after a refresh',
    errorName: 'PayoutsApiError',
    options: async () => ({ accessToken: async () => FRESH_TOKEN }),
    replies: [{ status: 401, headers: echoingHeaders(FRESH_TOKEN), body: echoingBody(FRESH_TOKEN) }],
  },
  {
    name: 'error reply echoing the credentials in a body that is not JSON',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [
      {
        status: 500,
        headers: { 'content-type': 'text/plain' },
        body: `key=${API_KEY}; token=${ACCESS_TOKEN}; ${jsonEscaped(API_KEY)}`,
      },
    ],
  },
  {
    name: "a proxy's error reply echoing its credentials",
    errorName: 'PayoutsApiError',
    options: async (stub) => throughProxy(stub),
    replies: [PROXY_ECHO],
  },
  {
    name: 'error reply echoing the credentials where a long body is cut to its excerpt',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [
      {
        status: 400,
        headers: { 'content-type': 'text/plain' },
        body: `${'x'.repeat(4090)}${API_KEY} ${jsonEscaped(ACCESS_TOKEN)} ${'y'.repeat(5000)}`,
      },
    ],
  },
  {
    name: 'redirect echoing the credentials',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [{ status: 307, headers: echoingHeaders(ACCESS_TOKEN), body: echoingBody(API_KEY, ACCESS_TOKEN) }],
  },
  {
    name: 'error reply too deeply nested to keep as JSON, echoing escaped credentials',
    errorName: 'PayoutsApiError',
    options: async () => ({}),
    replies: [
      { status: 400, body: `${'['.repeat(5000)}"${jsonEscaped(API_KEY)}","${ACCESS_TOKEN}"${']'.repeat(5000)}` },
    ],
  },
  {
    name: '2xx reply over the size cap echoing the credentials',
    errorName: 'PayoutOutcomeUnknownError',
    options: async () => ({ maxResponseBytes: 64 }),
    replies: [{ status: 201, headers: echoingHeaders(ACCESS_TOKEN), body: echoingBody(API_KEY, ACCESS_TOKEN) }],
  },
  {
    name: 'timeout',
    errorName: 'PayoutOutcomeUnknownError',
    options: async () => ({ timeoutMs: 100 }),
    replies: ['hang'],
  },
  { name: 'connection lost', errorName: 'PayoutOutcomeUnknownError', options: async () => ({}), replies: ['destroy'] },
  {
    name: 'token function throwing with its own secret',
    errorName: 'PayoutsAccessTokenError',
    options: async () => ({
      accessToken: () => {
        throw Object.assign(new Error(`token endpoint refused ${TOKEN_ENDPOINT_SECRET}`), {
          config: { headers: { Authorization: `Basic ${TOKEN_ENDPOINT_SECRET}` } },
        });
      },
    }),
    replies: [],
  },
];

describe('no secret leaves through an error or a log line', () => {
  const testbed = usePayoutsTestbed();

  async function start(path: ErrorPath, logger: RecordingLogger): Promise<PayoutsTestApp> {
    const { baseUrl = testbed.stub.baseUrl, ...overrides } = await path.options(testbed.stub);
    if (path.replies.length > 0) testbed.stub.reply(...path.replies);
    testbed.started = await startPayoutsAppFor(baseUrl, overrides, logger);
    return testbed.started;
  }

  it.each(PATHS)('$name: the rejection and the service logs', async (path) => {
    const logger = new RecordingLogger();
    const { payouts } = await start(path, logger);

    const error = await payouts.createPayout((path.request ?? walletPayoutRequest()) as never).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsError);
    expect((error as Error).name).toBe(path.errorName);
    expect((error as Error).cause).toBeUndefined();
    expectNoSecret(errorRenderings(error));
    expectNoSecret(logger.lines);
  });

  it.each(PATHS)('$name: the error Nest logs and answers when a merchant endpoint throws it', async (path) => {
    const logger = new RecordingLogger();
    const { url } = await start(path, logger);

    const response = await fetch(`${url}/merchant/payouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(path.request ?? walletPayoutRequest()),
    });

    expect(response.status).toBe(500);
    expectNoSecret([await response.text()]);
    const logged = logger.lines.filter((line) => line.includes(path.errorName));
    expect(logged.length).toBeGreaterThan(0);
    expectNoSecret(logger.lines);
  });

  it('redacts each credential where an echoing reply carries it, and keeps the rest of the body and headers', async () => {
    testbed.stub.reply({ status: 400, headers: echoingHeaders(ACCESS_TOKEN), body: echoingBody(ACCESS_TOKEN) });
    const { payouts } = await start(
      { name: 'echo', errorName: '', options: async () => ({}), replies: [] },
      new RecordingLogger(),
    );

    const error = (await payouts.createPayout(walletPayoutRequest()).catch((e: unknown) => e)) as PayoutsApiError;

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error.body).toEqual({
      echo: { headers: { 'x-api-key': '[redacted]', authorization: 'Bearer [redacted]' } },
      nested: [[{ deep: [['[redacted]']] }]],
      '[redacted]': 'escaped key',
      escaped: '[redacted]',
      url: 'https://x.example/?key=[redacted]',
    });
    expect(error.headers).toMatchObject({
      'x-echo-api-key': '[redacted]',
      'x-echo-authorization': 'Bearer [redacted]',
      location: 'https://elsewhere.example/payouts?api_key=[redacted]&token=[redacted]',
      'content-type': 'application/json',
    });
  });

  it("redacts a proxy's credentials, as sent and decoded, where its error reply echoes them", async () => {
    testbed.stub.reply(PROXY_ECHO);
    const { payouts } = await start(
      { name: 'proxy', errorName: '', options: async (stub) => throughProxy(stub), replies: [] },
      new RecordingLogger(),
    );

    const error = (await payouts.createPayout(walletPayoutRequest()).catch((e: unknown) => e)) as PayoutsApiError;

    expect(testbed.stub.requests[0]!.headers['proxy-authorization']).toBe(`Basic ${PROXY_BASIC}`);
    expect(error).toMatchObject({
      name: 'PayoutsApiError',
      status: 407,
      body: 'Proxy-Authorization: Basic [redacted]\nuser egress:[redacted]\nx-api-key: [redacted]',
    });
    expect(error.headers['x-echo-proxy-authorization']).toBe('Basic [redacted]');
  });

  describe('with a proxy and its credentials in HTTP_PROXY', () => {
    const ENV_PASSWORD = 'env-proxy-password-0b9e';
    const ENV_BASIC = Buffer.from(`envuser:${ENV_PASSWORD}`).toString('base64');
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };
    afterEach(() => {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    it('redacts them too: they are redacted as the request carried them, wherever they came from', async () => {
      const { host } = new URL(testbed.stub.baseUrl);
      process.env.HTTP_PROXY = `http://envuser:${ENV_PASSWORD}@${host}`;
      process.env.NO_PROXY = '';
      testbed.stub.reply({
        status: 502,
        body: { error: 'bad_gateway', echo: `Basic ${ENV_BASIC}`, user: `envuser:${ENV_PASSWORD}` },
      });
      const { payouts } = await start(
        {
          name: 'env proxy',
          errorName: '',
          options: async () => ({ baseUrl: 'http://payouts.internal.example/v1' }),
          replies: [],
        },
        new RecordingLogger(),
      );

      const error = await payouts.createPayout(walletPayoutRequest()).catch((e: unknown) => e);

      expect(testbed.stub.requests[0]!.headers['proxy-authorization']).toBe(`Basic ${ENV_BASIC}`);
      expect(error).toMatchObject({
        status: 502,
        body: { error: 'bad_gateway', echo: 'Basic [redacted]', user: 'envuser:[redacted]' },
      });
      for (const text of errorRenderings(error)) {
        expect(text).not.toContain(ENV_BASIC);
        expect(text).not.toContain(ENV_PASSWORD);
      }
    });
  });

  it('cuts a long error body to its excerpt after redacting, so no credential is left cut in two', async () => {
    const body = `${'x'.repeat(4090)}${API_KEY}${'y'.repeat(5000)}`;
    testbed.stub.reply({ status: 500, headers: { 'content-type': 'text/plain' }, body });
    const { payouts } = await start(
      { name: 'excerpt', errorName: '', options: async () => ({}), replies: [] },
      new RecordingLogger(),
    );

    const error = await payouts.createPayout(walletPayoutRequest()).catch((e: unknown) => e);

    expect(error).toMatchObject({
      name: 'PayoutsApiError',
      bodyTruncated: true,
      bodyLength: body.length,
      body: `${'x'.repeat(4090)}[redac`,
    });
  });

  it('drops a credential cut in half at the end of a truncated error body', async () => {
    const filler = 'x'.repeat(100);
    testbed.stub.reply({ status: 500, headers: { 'content-type': 'text/plain' }, body: `${filler}${API_KEY}` });
    const overrides = { maxResponseBytes: filler.length + (API_KEY.length >> 1) };
    const { payouts } = await start(
      { name: 'cut', errorName: '', options: async () => overrides, replies: [] },
      new RecordingLogger(),
    );

    const error = await payouts.createPayout(walletPayoutRequest()).catch((e: unknown) => e);

    expect(error).toMatchObject({ name: 'PayoutsApiError', bodyTruncated: true, body: filler });
  });

  it('sends through its own axios instance: interceptors an app puts on the global one never see a credential', async () => {
    const intercepted: unknown[] = [];
    const interceptor = axios.interceptors.request.use((config) => {
      intercepted.push(config.headers);
      return config;
    });
    try {
      const { payouts } = await start(
        { name: 'global', errorName: '', options: async () => ({}), replies: [] },
        new RecordingLogger(),
      );

      await payouts.createPayout(walletPayoutRequest());

      expect(testbed.stub.requests).toHaveLength(1);
      expect(intercepted).toEqual([]);
    } finally {
      axios.interceptors.request.eject(interceptor);
    }
  });

  it('the retry and refresh log lines name the request, never a credential', async () => {
    const logger = new RecordingLogger();
    testbed.stub.reply({ status: 503, body: {} }, { status: 401, body: {} }, { status: 201, body: {} });
    const { payouts } = await start(
      { name: 'mixed', errorName: '', options: async () => ({ accessToken: async () => FRESH_TOKEN }), replies: [] },
      logger,
    );

    await payouts.createPayout(walletPayoutRequest('req_logs'));

    expect(logger.lines.filter((line) => line.includes('"req_logs"'))).toHaveLength(2);
    expectNoSecret(logger.lines);
  });
});
