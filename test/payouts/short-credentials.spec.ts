import { describe, expect, it } from 'vitest';
import { PayoutsApiError } from 'nestjs-payouts';
import { RecordingLogger } from '../recording-logger.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

/** Placeholder credentials, as a first try with an API's sandbox might have them. */
const SHORT_KEY = 'out';
const SHORT_TOKEN = 'abc';

describe('credentials shorter than 8 characters', () => {
  const testbed = usePayoutsTestbed();

  it('are warned of at boot by option name, never by value', async () => {
    const logger = new RecordingLogger();
    testbed.started = await startPayoutsAppFor(
      testbed.stub.baseUrl,
      { apiKey: SHORT_KEY, accessToken: SHORT_TOKEN },
      logger,
    );

    expect(logger.messages('warn')).toEqual([
      'apiKey is shorter than 8 characters, unlike any real credential: check that it is the right value. ' +
        'Messages hide it only where it stands as a word of its own.',
      'accessToken is shorter than 8 characters, unlike any real credential: check that it is the right value. ' +
        'Messages hide it only where it stands as a word of its own.',
    ]);
  });

  it('are hidden where a reply echoes them, without cutting the words that hold their letters', async () => {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { apiKey: SHORT_KEY, accessToken: SHORT_TOKEN });
    testbed.stub.reply({
      status: 400,
      headers: { 'x-echo-api-key': SHORT_KEY, 'x-echo-note': `key${SHORT_KEY}` },
      body: {
        error: `api key ${SHORT_KEY} is not valid for abcdef.example`,
        authorization: `Bearer ${SHORT_TOKEN}`,
        token: SHORT_TOKEN,
        path: '/payouts',
      },
    });

    const error = (await testbed.started.payouts
      .createPayout(walletPayoutRequest('req_short'))
      .catch((e: unknown) => e)) as PayoutsApiError;

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error.message).toBe(
      'Payout request "req_short" (POST /payouts) was rejected by the payouts API with HTTP 400.',
    );
    expect(error.body).toEqual({
      error: 'api key [redacted] is not valid for abcdef.example',
      authorization: 'Bearer [redacted]',
      token: '[redacted]',
      path: '/payouts',
    });
    // Header values are structured fields: a credential is hidden wherever it appears in them.
    expect(error.headers).toMatchObject({ 'x-echo-api-key': '[redacted]', 'x-echo-note': 'key[redacted]' });
  });
});
