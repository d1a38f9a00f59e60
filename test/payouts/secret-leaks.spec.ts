import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PayoutsError } from 'nestjs-payouts';
import type { PayoutsModuleOptions } from 'nestjs-payouts';
import { type PayoutsApiStub, refusingBaseUrl, type StubReply } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { ACCESS_TOKEN, API_KEY, type PayoutsTestApp, startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

const FRESH_TOKEN = 'fresh-token-from-function-e71b';
const TOKEN_ENDPOINT_SECRET = 'client-secret-used-by-token-function-40aa';
const SECRETS = [API_KEY, ACCESS_TOKEN, FRESH_TOKEN, TOKEN_ENDPOINT_SECRET];

/** Every way an error can end up in a log, a response or a snapshot. */
function renderings(error: unknown): string[] {
  const asError = error as Error;
  return [
    String(error),
    asError.message,
    asError.stack ?? '',
    JSON.stringify(error),
    inspect(error, { depth: 10, showHidden: true }),
    inspect(error, { depth: 10, showHidden: true, getters: true }),
  ];
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
  { name: '401 with a fixed token', errorName: 'PayoutsApiError', options: async () => ({}), replies: [{ status: 401, body: {} }] },
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
  { name: '500 echoing nothing', errorName: 'PayoutsApiError', options: async () => ({}), replies: [{ status: 500, body: 'oops' }] },
  { name: 'redirect', errorName: 'PayoutsApiError', options: async () => ({}), replies: [{ status: 302, headers: { location: '/x' } }] },
  {
    name: 'connection refused after retries',
    errorName: 'PayoutsNetworkError',
    options: async () => ({ baseUrl: await refusingBaseUrl() }),
    replies: [],
  },
  { name: 'timeout', errorName: 'PayoutOutcomeUnknownError', options: async () => ({ timeoutMs: 100 }), replies: ['hang'] },
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
    expectNoSecret(renderings(error));
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
