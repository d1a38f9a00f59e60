import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PayoutsCallOptionsError } from 'nestjs-payouts';
import type { PayoutsApiRequest } from 'nestjs-payouts';
import { errorRenderings } from './error-renderings.js';
import { PayoutsApiStub } from './payouts-api-stub.js';
import { API_KEY, type PayoutsTestApp, startPayoutsAppFor } from './payouts-test-app.js';

/*
 * request() sends the API key and the access token to wherever its path leads, so a path must never lead out of
 * baseUrl: not with dot segments spelt as the URL parser reads them (%2e in any case, a backslash for "/", a tab or
 * line break it drops), nor with a path parameter "." or "..". Oracle: such a call rejects with
 * PayoutsCallOptionsError before the access token is even asked for, and nothing reaches the API.
 */

const TOKEN = 'token-from-function-9d2e7a';

/** One app against one stub for the whole describe block, with an access token function that counts its calls. */
function useApp(): { stub: PayoutsApiStub; started: PayoutsTestApp; tokenCalls: number } {
  const context = { tokenCalls: 0 } as { stub: PayoutsApiStub; started: PayoutsTestApp; tokenCalls: number };
  beforeAll(async () => {
    context.stub = await PayoutsApiStub.start();
    context.stub.reply({ status: 200, body: { ok: true } });
    context.started = await startPayoutsAppFor(`${context.stub.baseUrl}/v1`, {
      accessToken: () => {
        context.tokenCalls++;
        return TOKEN;
      },
    });
  });
  afterAll(async () => {
    await context.started.app.close();
    await context.stub.close();
  });
  beforeEach(() => {
    context.stub.requests.length = 0;
  });
  return context;
}

// Nothing in this block gets through, so the token function, called on first use, is never called at all.
describe('request() refuses a path that would leave baseUrl, before fetching a credential', () => {
  const context = useApp();

  async function refusal(request: Partial<PayoutsApiRequest>): Promise<PayoutsCallOptionsError> {
    const error = await context.started.payouts
      .request({ method: 'GET', path: '/payouts', ...request } as PayoutsApiRequest)
      .then(
        () => undefined,
        (rejection: unknown) => rejection,
      );
    expect(error).toBeInstanceOf(PayoutsCallOptionsError);
    expect(context.stub.requests).toEqual([]);
    expect(context.tokenCalls).toBe(0);
    for (const rendering of errorRenderings(error)) {
      expect(rendering).not.toContain(API_KEY);
      expect(rendering).not.toContain(TOKEN);
    }
    return error as PayoutsCallOptionsError;
  }

  it.each([
    '/%2e%2e/%2e%2e/admin/users',
    '/%2E%2E/admin/users',
    '/%2e%2E/admin/users',
    '/.%2e/admin/users',
    '/%2e./admin/users',
    '/payouts/%2e%2e/%2e%2e/%2e%2e/admin/users',
    '/payouts/%2e/%2e%2e/%2e%2e/admin/users',
  ])('refuses %s, a dot segment spelt with percent-encoded dots, naming the path', async (path) => {
    const error = await refusal({ path });

    expect(error.option).toBe('path');
    expect(error.message).toBe(
      'Call option "path" is invalid: expected a path without "." or ".." segments (also spelt %2e), which would ' +
        'leave the base URL. Nothing was sent.',
    );
  });

  it.each([
    ['a backslash for "/"', '/\\..\\..\\admin\\users'],
    ['a tab inside ".."', '/.\t./.\t./admin/users'],
    ['a line feed inside ".."', '/.\n./.\n./admin/users'],
    ['a carriage return inside ".."', '/.\r./admin/users'],
    ['a last segment ".." with a trailing space', '/payouts/../.. '],
  ])('refuses a path with %s, which the URL parser would turn into a dot segment', async (_case, path) => {
    const error = await refusal({ path });

    expect(error.option).toBe('path');
    expect(error.message).toBe(
      'Call option "path" is invalid: expected a path without backslashes, spaces or control characters (such ' +
        'text goes in params, which are encoded). Nothing was sent.',
    );
  });

  it.each(['..', '.', '%2e%2e', '.%2E', '%2e'])(
    'refuses the path parameter %j, which would move /payouts/{id} up a level',
    async (id) => {
      const error = await refusal({ method: 'POST', path: '/payouts/{id}', params: { id }, body: {} });

      expect(error.option).toBe('params.id');
      expect(error.message).toBe(
        'Call option "params.id" is invalid: expected a value other than "." or ".." (also spelt %2e). Nothing was sent.',
      );
    },
  );
});

describe('request() sends what stays below baseUrl', () => {
  const context = useApp();

  it('sends dots that are not whole segments, in the path and in parameters, as written', async () => {
    await context.started.payouts.request({
      method: 'GET',
      path: '/files/v1.2/.well-known/{name}/...',
      params: { name: '..hidden.' },
    });

    expect(context.stub.requests.map(({ path }) => path)).toEqual(['/v1/files/v1.2/.well-known/..hidden./...']);
  });

  it('property: whatever the path and parameter are made of, a request is refused or stays below baseUrl', async () => {
    const piece = fc.constantFrom(
      '.',
      '..',
      '%2e',
      '%2E',
      '.%2e',
      '%2e.',
      '%2E%2e',
      '\\',
      '\t',
      '\n',
      '\r',
      ' ',
      '/',
      '//',
      'admin',
      'payouts',
      '@evil.example',
      ':80',
      '%2f',
      '%5c',
      '{id}',
    );
    const path = fc.array(piece, { minLength: 1, maxLength: 8 }).map((pieces) => `/${pieces.join('')}`);
    const id = fc.array(fc.constantFrom('.', '%2e', '%2E', 'a', '/', '\\', ' ', '\t'), { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(path, id, async (template, idPieces) => {
        const { stub, started } = context;
        stub.requests.length = 0;
        const params = template.includes('{id}') ? { id: idPieces.join('') } : undefined;
        const outcome = await started.payouts.request({ method: 'GET', path: template, params }).then(
          () => 'sent',
          (error: unknown) => error,
        );
        if (outcome === 'sent') {
          expect(stub.requests).toHaveLength(1);
          expect(stub.requests[0]!.path.startsWith('/v1/')).toBe(true);
        } else {
          expect(outcome).toBeInstanceOf(PayoutsCallOptionsError);
          expect(stub.requests).toEqual([]);
        }
      }),
      { seed: 20_261_124, numRuns: 300, interruptAfterTimeLimit: 60_000 },
    );
  }, 90_000);
});
