import { Body, Controller, Post, UseFilters } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import type { PayoutsModuleOptions } from 'nestjs-payouts';
import type { CreatePayoutRequest } from 'nestjs-payouts';
import { PayoutsExceptionFilter } from 'nestjs-payouts';
import { PayoutsService } from 'nestjs-payouts';
import { ADAPTERS } from '../notifications/notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { refusingBaseUrl, type StubReply } from './payouts-api-stub.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { ACCESS_TOKEN, API_KEY, startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

/** An app's own endpoint exposing payouts, with the package's filter. */
@Controller('shop')
@UseFilters(PayoutsExceptionFilter)
class ShopPayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  @Post('payouts')
  async create(@Body() request: CreatePayoutRequest): Promise<unknown> {
    return (await this.payouts.createPayout(request)).body;
  }

  @Post('broken')
  broken(): never {
    throw new Error('not a payouts error');
  }
}

const echoed = { key: API_KEY, authorization: `Bearer ${ACCESS_TOKEN}` };

interface FilterCase {
  name: string;
  replies?: StubReply[];
  options?: Partial<PayoutsModuleOptions>;
  refused?: boolean;
  request?: unknown;
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Whether the filter logs the error (5xx replies). */
  logged: boolean;
}

const OUTCOME_UNKNOWN =
  'No complete reply from the payouts API: the payout may exist. Check its outcome before trying again.';

const CASES: FilterCase[] = [
  {
    name: 'an invalid payout request: 400 with the fields',
    request: {
      ...walletPayoutRequest('req_bad'),
      amount: { value: '-1', currency_code: 'kes' },
      country_code: undefined,
    },
    status: 400,
    body: {
      statusCode: 400,
      message: 'Invalid payout request',
      errors: [
        { path: 'amount.value', messages: ['value must be a positive decimal string with a dot, such as "125.50"'] },
        { path: 'amount.currency_code', messages: ['currency_code must be in capitals'] },
        { path: 'country_code', messages: ['country_code is required'] },
      ],
    },
    logged: false,
  },
  {
    name: 'no reply in time: 504 with the request id',
    replies: ['hang'],
    options: { timeoutMs: 100 },
    status: 504,
    body: { statusCode: 504, message: OUTCOME_UNKNOWN, requestId: 'req_f' },
    logged: true,
  },
  {
    name: 'the connection lost after sending: 502 with the request id',
    replies: ['destroy'],
    status: 502,
    body: { statusCode: 502, message: OUTCOME_UNKNOWN, requestId: 'req_f' },
    logged: true,
  },
  {
    name: 'a busy API: 503 passing its Retry-After on',
    replies: [{ status: 429, headers: { 'retry-after': '7' }, body: echoed }],
    options: { retries: 0 },
    status: 503,
    body: {
      statusCode: 503,
      message: 'The payouts API is busy; nothing was processed, try again later',
      requestId: 'req_f',
      upstreamStatus: 429,
    },
    headers: { 'retry-after': '7' },
    logged: true,
  },
  {
    name: 'a refused payout: 422',
    replies: [{ status: 422, body: { error: 'insufficient_funds', echoed } }],
    status: 422,
    body: {
      statusCode: 422,
      message: 'The payouts API refused the payout request',
      requestId: 'req_f',
      upstreamStatus: 422,
    },
    logged: false,
  },
  {
    name: 'a conflict: 409',
    replies: [{ status: 409, body: {} }],
    status: 409,
    body: {
      statusCode: 409,
      message: 'The payouts API reports a conflict with an earlier request',
      requestId: 'req_f',
      upstreamStatus: 409,
    },
    logged: false,
  },
  {
    name: 'credentials refused, echoed back: 502, no secret',
    replies: [{ status: 401, headers: { 'x-echo': API_KEY }, body: echoed }],
    status: 502,
    body: {
      statusCode: 502,
      message: 'The payouts API answered with an error',
      requestId: 'req_f',
      upstreamStatus: 401,
    },
    logged: true,
  },
  {
    name: 'the API unreachable: 503',
    refused: true,
    options: { retries: 0 },
    status: 503,
    body: { statusCode: 503, message: 'The payouts API cannot be reached; nothing was sent', requestId: 'req_f' },
    logged: true,
  },
  {
    name: 'the token function failing: 503',
    options: {
      accessToken: () => {
        throw new Error(`token endpoint said ${ACCESS_TOKEN}`);
      },
    },
    status: 503,
    body: { statusCode: 503, message: 'No access token for the payouts API; nothing was sent', requestId: 'req_f' },
    logged: true,
  },
];

describe.each(ADAPTERS)('PayoutsExceptionFilter on %s', (adapter) => {
  const testbed = usePayoutsTestbed();

  it.each(CASES)('$name', async (filterCase) => {
    const logger = new RecordingLogger();
    if (filterCase.replies) testbed.stub.reply(...filterCase.replies);
    const baseUrl = filterCase.refused ? await refusingBaseUrl() : testbed.stub.baseUrl;
    testbed.started = await startPayoutsAppFor(baseUrl, filterCase.options, logger, {
      adapter,
      controllers: [ShopPayoutsController],
    });

    const response = await fetch(`${testbed.started.url}/shop/payouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(filterCase.request ?? walletPayoutRequest('req_f')),
    });

    expect(response.status).toBe(filterCase.status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual(filterCase.body);
    for (const [name, value] of Object.entries(filterCase.headers ?? {}))
      expect(response.headers.get(name)).toBe(value);
    const logged = logger.lines.filter((line) => line.startsWith('error:') && line.includes('PayoutsExceptionFilter'));
    expect(logged).toHaveLength(filterCase.logged ? 1 : 0);
    for (const rendered of [text, ...logger.lines]) {
      expect(rendered).not.toContain(API_KEY);
      expect(rendered).not.toContain(ACCESS_TOKEN);
    }
  });

  it('leaves other errors to Nest', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, {}, false, {
      adapter,
      controllers: [ShopPayoutsController],
    });

    const response = await fetch(`${testbed.started.url}/shop/broken`, { method: 'POST' });

    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ statusCode: 500, message: 'Internal server error' });
  });
});
