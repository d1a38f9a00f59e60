import { describe, expect, it } from 'vitest';
import { PayoutValidationError, type PayoutsRequestEvent, type PayoutsResponseEvent } from 'nestjs-payouts';
import { MockFault } from 'nestjs-payouts/testing';
import { refusingBaseUrl } from '../payouts/payouts-api-stub.js';
import { walletPayoutRequest } from '../payouts/payout-request.fixture.js';
import { startPayoutsAppFor, useMockPayoutsTestbed } from '../payouts/payouts-test-app.js';
import { RecordingLogger } from '../recording-logger.js';

describe("PayoutsService's request and response events", () => {
  const testbed = useMockPayoutsTestbed();

  /** Starts the app and records every request and response event, in order. */
  async function startRecording(
    overrides = {},
    baseUrl = testbed.mock.baseUrl,
    logger: RecordingLogger | false = false,
  ) {
    testbed.started = await startPayoutsAppFor(baseUrl, overrides, logger);
    const events: (['request', PayoutsRequestEvent] | ['response', PayoutsResponseEvent])[] = [];
    testbed.started.payouts
      .on('request', (event) => events.push(['request', event]))
      .on('response', (event) => events.push(['response', event]));
    return { payouts: testbed.started.payouts, events };
  }

  it('tells each attempt of a payout answered 503 then 201, and how it ended', async () => {
    testbed.mock.fail({ times: 1 }, MockFault.status(503, { error: 'busy' }));
    const { payouts, events } = await startRecording();

    await payouts.createPayout(walletPayoutRequest('req_events'));

    const request = (attempt: number) => ({
      account: 'default',
      operation: 'create_payout',
      requestId: 'req_events',
      attempt,
      method: 'POST',
      path: '/payouts',
    });
    expect(events.map(([name]) => name)).toEqual(['request', 'response', 'request', 'response']);
    expect(events[0]![1]).toEqual(request(1));
    expect(events[1]![1]).toEqual({
      ...request(1),
      status: 503,
      errorCode: undefined,
      elapsedMs: expect.any(Number),
      outcome: 'retrying',
    });
    expect(events[2]![1]).toEqual(request(2));
    expect(events[3]![1]).toEqual({
      ...request(2),
      status: 201,
      errorCode: undefined,
      elapsedMs: expect.any(Number),
      outcome: 'succeeded',
    });
    expect((events[3]![1] as PayoutsResponseEvent).elapsedMs).toBeGreaterThan(0);
  });

  it('tells a request() call by its method and path, without the query string', async () => {
    // The mock serves POST /payouts only, and answers 404 to any other path.
    const { payouts, events } = await startRecording();

    await expect(
      payouts.request({ method: 'GET', path: '/payouts/{id}', params: { id: 'po_9' }, query: { expand: 'fees' } }),
    ).rejects.toMatchObject({ status: 404 });

    expect(events.map(([, event]) => event)).toEqual([
      {
        account: 'default',
        operation: 'request',
        requestId: undefined,
        attempt: 1,
        method: 'GET',
        path: '/payouts/po_9',
      },
      expect.objectContaining({ attempt: 1, status: 404, errorCode: undefined, outcome: 'rejected' }),
    ]);
  });

  it('tells an attempt that got no reply by its error code', async () => {
    const { payouts, events } = await startRecording({ retries: 0 }, await refusingBaseUrl());

    await expect(payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    expect(events[1]).toEqual([
      'response',
      expect.objectContaining({ status: undefined, errorCode: 'ECONNREFUSED', outcome: 'network_error' }),
    ]);
  });

  it('sends no event for a call that sent nothing, such as an invalid payout', async () => {
    const { payouts, events } = await startRecording();

    await expect(payouts.createPayout({ ...walletPayoutRequest(), amount: undefined as never })).rejects.toThrow(
      PayoutValidationError,
    );

    expect(events).toEqual([]);
  });

  it('calls a once listener for one event only, and no listener after off()', async () => {
    testbed.started = await startPayoutsAppFor(testbed.mock.baseUrl);
    const { payouts } = testbed.started;
    const once: number[] = [];
    const removed: number[] = [];
    const remove = (event: PayoutsRequestEvent) => removed.push(event.attempt);
    payouts
      .once('request', (event) => once.push(event.attempt))
      .on('request', remove)
      .off('request', remove);

    await payouts.createPayout(walletPayoutRequest('req_1'));
    await payouts.createPayout(walletPayoutRequest('req_2'));

    expect(once).toEqual([1]);
    expect(removed).toEqual([]);
  });

  it('logs a listener that throws or rejects, and the payout and the other listeners go on', async () => {
    const logger = new RecordingLogger();
    const { payouts, events } = await startRecording({}, testbed.mock.baseUrl, logger);
    payouts.on('request', () => {
      throw new Error('listener bug');
    });
    payouts.on('response', async () => {
      throw new Error('async listener bug');
    });

    const result = await payouts.createPayout(walletPayoutRequest());

    expect(result.status).toBe(201);
    expect(events.map(([name]) => name)).toEqual(['request', 'response']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(logger.messages('error')).toEqual([
      "A 'request' listener failed; the other listeners and the call went on",
      "A 'response' listener failed; the other listeners and the call went on",
    ]);
  });
});
