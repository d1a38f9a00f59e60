import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runNodeProcess } from '../node-process.js';
import { walletPayoutRequest } from './payout-request.fixture.js';
import { CREATED_PAYOUT, PayoutsApiStub } from './payouts-api-stub.js';

const APP = fileURLToPath(new URL('./first-call-app.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the HTTP client of PayoutsService, in an app built on the package', () => {
  let api: PayoutsApiStub;

  beforeEach(async () => {
    api = await PayoutsApiStub.start();
  });

  afterEach(async () => {
    await api.close();
  });

  it('is loaded at the first call, not at boot, and serves first calls made at once', async () => {
    const request = walletPayoutRequest('req_first_call');
    const run = await runNodeProcess([APP, `--base-url=${api.baseUrl}`, `--request=${JSON.stringify(request)}`], {
      cwd: ROOT,
      timeoutMs: 30_000,
    });

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    // Nest 12's @nestjs/axios imports axios as a module, which the hooks see; Nest 11's requires it, which they do not.
    expect(lines.filter((line) => line !== 'load axios')).toEqual([
      'booted',
      'load @nestjs/axios',
      `sent 201 ${JSON.stringify(CREATED_PAYOUT)}`,
      `sent 201 ${JSON.stringify(CREATED_PAYOUT)}`,
      'done',
    ]);
    expect(lines[0]).toBe('booted');
    expect(api.requests.map(({ method, path, body }) => ({ method, path, body: JSON.parse(body) as unknown }))).toEqual(
      ['first', 'second'].map((suffix) => ({
        method: 'POST',
        path: '/payouts',
        body: { ...request, request_id: `req_first_call-${suffix}` },
      })),
    );
  });
});
