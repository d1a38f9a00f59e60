import { readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PayoutsNetworkError } from 'nestjs-payouts';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { PayoutsApiStub } from './payouts-api-stub.js';
import {
  ACCESS_TOKEN,
  API_KEY,
  type PayoutsTestApp,
  startPayoutsAppFor,
  usePayoutsTestbed,
} from './payouts-test-app.js';

const tls = (name: string) => readFileSync(new URL(`./fixtures/tls/${name}`, import.meta.url));

describe('transport options', () => {
  const testbed = usePayoutsTestbed();

  it('sends through the httpAgent given, and leaves it open when the app closes', async () => {
    const agent = new HttpAgent({ keepAlive: true });
    try {
      testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { httpAgent: agent });

      await testbed.started.payouts.createPayout(walletPayoutRequest());
      await testbed.started.app.close();
      testbed.started = undefined;

      // The kept-alive socket sits in the app's own agent, still open: the module closes only agents it made.
      const idle = Object.values(agent.freeSockets).flat();
      expect(idle).toHaveLength(1);
      expect(idle[0]!.destroyed).toBe(false);
    } finally {
      agent.destroy();
    }
  });

  it('goes through a proxy, with its credentials, and still follows no redirect from it', async () => {
    // The stub stands in for a forward proxy: a plain-HTTP target is requested from it by absolute URL.
    testbed.stub.reply(
      { status: 201, body: { id: 'po_proxied' } },
      { status: 302, headers: { location: 'http://elsewhere.example/' } },
    );
    const [host, port] = testbed.stub.baseUrl.replace('http://', '').split(':');
    testbed.started = await startPayoutsAppFor('http://payouts.internal.example/v1', {
      proxy: {
        protocol: 'http',
        host: host!,
        port: Number(port),
        auth: { username: 'egress', password: 'proxy-pass-31c9' },
      },
    });
    const { payouts } = testbed.started;

    await expect(payouts.createPayout(walletPayoutRequest())).resolves.toMatchObject({ body: { id: 'po_proxied' } });
    const redirected = await payouts.createPayout(walletPayoutRequest()).catch((e: unknown) => e);

    expect(redirected).toMatchObject({ name: 'PayoutsApiError', status: 302 });
    expect(testbed.stub.requests.map(({ path }) => path)).toEqual([
      'http://payouts.internal.example/v1/payouts',
      'http://payouts.internal.example/v1/payouts',
    ]);
    expect(testbed.stub.requests[0]!.headers).toMatchObject({
      'proxy-authorization': `Basic ${Buffer.from('egress:proxy-pass-31c9').toString('base64')}`,
      'x-api-key': API_KEY,
      authorization: `Bearer ${ACCESS_TOKEN}`,
    });
  });

  describe('with HTTP_PROXY set in the environment', () => {
    let proxy: PayoutsApiStub;
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };

    beforeEach(async () => {
      proxy = await PayoutsApiStub.start();
      process.env.HTTP_PROXY = proxy.baseUrl;
      process.env.NO_PROXY = '';
    });

    afterEach(async () => {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await proxy.close();
    });

    it('uses it by default, as axios does', async () => {
      testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl);

      await testbed.started.payouts.createPayout(walletPayoutRequest());

      expect(proxy.requests.map(({ path }) => path)).toEqual([`${testbed.stub.baseUrl}/payouts`]);
      expect(testbed.stub.requests).toHaveLength(0);
    });

    it('ignores it with proxy: false', async () => {
      testbed.started = await startPayoutsAppFor(testbed.stub.baseUrl, { proxy: false });

      await testbed.started.payouts.createPayout(walletPayoutRequest());

      expect(testbed.stub.requests.map(({ path }) => path)).toEqual(['/payouts']);
      expect(proxy.requests).toHaveLength(0);
    });
  });
});

describe('transport options over TLS', () => {
  let stub: PayoutsApiStub;
  let started: PayoutsTestApp | undefined;

  beforeEach(async () => {
    // An API that only talks to clients presenting a certificate from its CA, with a certificate from that CA.
    stub = await PayoutsApiStub.start({
      key: tls('server.key'),
      cert: tls('server.pem'),
      ca: tls('ca.pem'),
      requestCert: true,
      rejectUnauthorized: true,
    });
  });

  afterEach(async () => {
    await started?.app.close();
    started = undefined;
    await stub.close();
  });

  it('presents a client certificate and trusts a custom CA through the httpsAgent', async () => {
    const httpsAgent = new HttpsAgent({
      keepAlive: true,
      ca: tls('ca.pem'),
      cert: tls('client.pem'),
      key: tls('client.key'),
    });
    try {
      started = await startPayoutsAppFor(stub.baseUrl, { httpsAgent });

      await expect(started.payouts.createPayout(walletPayoutRequest())).resolves.toMatchObject({ status: 201 });

      expect(stub.requests[0]).toMatchObject({ path: '/payouts', clientCertificate: 'merchant-client' });
      expect(stub.requests[0]!.headers).toMatchObject({ 'x-api-key': API_KEY });
    } finally {
      httpsAgent.destroy();
    }
  });

  it('refuses a server its agent does not trust before sending anything: PayoutsNetworkError', async () => {
    started = await startPayoutsAppFor(stub.baseUrl, { retries: 0 });

    const error = await started.payouts.createPayout(walletPayoutRequest('req_tls')).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PayoutsNetworkError);
    expect((error as PayoutsNetworkError).code).toMatch(/CERT|UNABLE_TO_VERIFY/);
    expect(stub.requests).toHaveLength(0);
  });
});
