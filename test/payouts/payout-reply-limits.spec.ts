import { describe, expect, it } from 'vitest';
import { PayoutOutcomeUnknownError } from 'nestjs-payouts';
import { PayoutsApiError } from 'nestjs-payouts';
import { compressionBomb, ENCODINGS, type Encoding, type HostileLog, hostileReply } from './hostile-replies.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { startPayoutsAppFor, usePayoutsTestbed } from './payouts-test-app.js';

const CAP = 4096;
const MIB = 1024 * 1024;
const encodings = Object.keys(ENCODINGS) as Encoding[];

/** A JSON object of about `size` bytes. */
function jsonOfSize(size: number): string {
  return JSON.stringify({ error: 'huge', filler: 'y'.repeat(size) });
}

describe('maxResponseBytes caps what a reply may cost, counted after decoding', () => {
  const testbed = usePayoutsTestbed();

  async function payout(maxResponseBytes?: number): Promise<unknown> {
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, maxResponseBytes ? { maxResponseBytes } : {});
    return testbed.started.payouts.createPayout(walletPayoutRequest('req_big')).catch((e: unknown) => e);
  }

  it('turns a 2xx reply over the cap into PayoutOutcomeUnknownError: the payout may exist', async () => {
    testbed.stub.reply({ status: 201, body: jsonOfSize(CAP) });

    const error = await payout(CAP);

    expect(error).toBeInstanceOf(PayoutOutcomeUnknownError);
    expect(error).toMatchObject({ requestId: 'req_big', code: 'RESPONSE_TOO_LARGE', status: 201 });
    expect((error as Error).message).toBe(
      'Payout request "req_big" (POST /payouts) may or may not have been processed: the reply (HTTP 201) was larger than ' +
        `maxResponseBytes (${CAP} bytes). Check its outcome with request_id "req_big" before trying again.`,
    );
    expect(testbed.stub.requests).toHaveLength(1);
  });

  it('accepts a reply of exactly the cap', async () => {
    const body = jsonOfSize(100);
    testbed.stub.reply({ status: 201, body });

    await expect(payout(body.length)).resolves.toMatchObject({ status: 201, body: { error: 'huge' } });
  });

  it('caps at 1 MiB by default', async () => {
    testbed.stub.reply({ status: 201, body: jsonOfSize(MIB) });

    expect(await payout()).toMatchObject({ name: 'PayoutOutcomeUnknownError', code: 'RESPONSE_TOO_LARGE' });
  });

  it('keeps the first maxResponseBytes of an error reply over the cap as text, and says so', async () => {
    const body = jsonOfSize(10 * CAP);
    testbed.stub.reply({ status: 500, body });

    const error = (await payout(CAP)) as PayoutsApiError;

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error).toMatchObject({ status: 500, bodyTruncated: true, body: body.slice(0, CAP), bodyLength: CAP });
    expect(error.message).toBe(
      'Payout request "req_big" (POST /payouts) was rejected by the payouts API with HTTP 500; ' +
        `the reply body was larger than maxResponseBytes (${CAP} bytes) and is kept truncated.`,
    );
  });

  it('keeps a 4,096-character excerpt of a long error reply that arrived whole, and its length', async () => {
    const body = jsonOfSize(10 * CAP);
    testbed.stub.reply({ status: 422, body });

    const error = (await payout()) as PayoutsApiError;

    expect(error).toBeInstanceOf(PayoutsApiError);
    expect(error).toMatchObject({ status: 422, bodyTruncated: true, bodyLength: body.length });
    expect(error.body).toBe(body.slice(0, 4096));
    expect(error.message).toBe(
      'Payout request "req_big" (POST /payouts) was rejected by the payouts API with HTTP 422.',
    );
  });

  it('keeps an error reply of up to 4,096 characters whole, parsed, with its length in bytes', async () => {
    const body = JSON.stringify({ error: 'é'.repeat(4000) });
    testbed.stub.reply({ status: 422, body });

    const error = (await payout()) as PayoutsApiError;

    expect(body.length).toBeLessThanOrEqual(4096);
    expect(error).toMatchObject({ bodyTruncated: false, bodyLength: Buffer.byteLength(body), body: JSON.parse(body) });
  });

  it('never cuts a character in two at the end of the excerpt', async () => {
    const body = `${'x'.repeat(4095)}😀${'y'.repeat(100)}`;
    testbed.stub.reply({ status: 400, headers: { 'content-type': 'text/plain' }, body });

    const error = (await payout()) as PayoutsApiError;

    expect(error).toMatchObject({ bodyTruncated: true, body: 'x'.repeat(4095), bodyLength: Buffer.byteLength(body) });
  });

  it('stops reading a 2xx body that never ends', async () => {
    const log: HostileLog = { finished: 0, abandoned: 0 };
    testbed.stub.reply(hostileReply({ status: 201, body: '{"id":"po_1",', endless: true }, log));

    expect(await payout(CAP)).toMatchObject({ name: 'PayoutOutcomeUnknownError', code: 'RESPONSE_TOO_LARGE' });
    await expect.poll(() => log.abandoned).toBe(1);
    expect(log.finished).toBe(0);
  });

  it.each(encodings)('stops inflating a %s bomb sent with a 2xx', async (encoding) => {
    testbed.stub.reply({ status: 201, ...compressionBomb(encoding, 64 * MIB) });

    expect(await payout()).toMatchObject({ name: 'PayoutOutcomeUnknownError', code: 'RESPONSE_TOO_LARGE' });
  });

  it.each(encodings)('keeps at most the cap of a %s bomb sent with an error status', async (encoding) => {
    testbed.stub.reply({ status: 400, ...compressionBomb(encoding, 64 * MIB) });

    const error = (await payout(CAP)) as PayoutsApiError;

    expect(error).toMatchObject({ name: 'PayoutsApiError', status: 400, bodyTruncated: true, body: '\0'.repeat(CAP) });
  });

  it.each(encodings)('decodes a %s reply within the cap', async (encoding) => {
    const created = JSON.stringify({ id: 'po_7', status: 'accepted' });
    const refused = JSON.stringify({ error: 'insufficient_funds' });
    const compressed = (text: string) => ({
      headers: { 'content-encoding': encoding },
      body: ENCODINGS[encoding](Buffer.from(text)),
    });
    testbed.stub.reply(
      hostileReply({ status: 201, ...compressed(created) }),
      hostileReply({ status: 422, ...compressed(refused) }),
    );
    testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { maxResponseBytes: created.length });
    const { payouts } = testbed.started;

    await expect(payouts.createPayout(walletPayoutRequest())).resolves.toMatchObject({
      status: 201,
      body: { id: 'po_7' },
    });
    await expect(payouts.createPayout(walletPayoutRequest())).rejects.toMatchObject({
      status: 422,
      body: { error: 'insufficient_funds' },
      bodyTruncated: false,
      // Counted after decoding.
      bodyLength: refused.length,
    });
  });

  it('treats a 2xx body that cannot be decoded as an unknown outcome', async () => {
    testbed.stub.reply(hostileReply({ status: 201, headers: { 'content-encoding': 'gzip' }, body: 'not gzip at all' }));

    expect(await payout()).toMatchObject({ name: 'PayoutOutcomeUnknownError', status: 201 });
  });
});
