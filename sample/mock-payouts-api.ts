import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findPayoutRequestProblems } from './payout-request-rules.js';

const MAX_BODY_BYTES = 64 * 1024;

export interface MockPayout {
  id: string;
  status: 'pending';
  request_id: string;
  amount: unknown;
  created_at: string;
}

export interface MockPayoutsApi {
  /** Give this to the app as its payouts base URL. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly accessToken: string;
  /** Every `POST /payouts` request, whatever its answer. */
  readonly requests: { status: number; body: unknown }[];
  close(): Promise<void>;
}

/**
 * A stand-in for the payouts API on 127.0.0.1, so the sample runs without credentials.
 * It enforces what the spec states (both credential headers, a JSON body with every wallet field);
 * the reply shape is its own, since the spec leaves the payout record undefined.
 * A repeated `request_id` gets the payout created the first time, as a retry should.
 */
export async function startMockPayoutsApi(): Promise<MockPayoutsApi> {
  const apiKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const accessToken = fakeJwt();
  const payouts = new Map<string, MockPayout>();
  const requests: MockPayoutsApi['requests'] = [];

  const server = createServer((req, res) => {
    void readBody(req).then(
      (text) => {
        const [status, reply] = answer(req, text);
        if (req.url === '/payouts' && req.method === 'POST') {
          requests.push({ status, body: parseJson(text) });
        }
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
      },
      () => {
        if (!res.headersSent)
          res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"payload_too_large"}');
      },
    );
  });

  function answer(req: IncomingMessage, text: string): [number, unknown] {
    if (req.url !== '/payouts') return [404, { error: 'not_found' }];
    if (req.method !== 'POST') return [405, { error: 'method_not_allowed' }];
    if (req.headers['x-api-key'] !== apiKey) return [401, { error: 'invalid_api_key' }];
    if (req.headers.authorization !== `Bearer ${accessToken}`) return [401, { error: 'invalid_access_token' }];
    if (!req.headers['content-type']?.startsWith('application/json')) return [415, { error: 'unsupported_media_type' }];
    const body = parseJson(text);
    const problems = findPayoutRequestProblems(body);
    if (problems.length > 0) return [400, { error: 'invalid_request', problems }];
    const request = body as { request_id: string; amount: unknown };
    const existing = payouts.get(request.request_id);
    if (existing) return [200, existing];
    const payout: MockPayout = {
      id: `po_${randomUUID().replaceAll('-', '').slice(0, 16)}`,
      status: 'pending',
      request_id: request.request_id,
      amount: request.amount,
      created_at: new Date().toISOString(),
    };
    payouts.set(request.request_id, payout);
    return [201, payout];
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey,
    accessToken,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A token in JWT form (header.payload.signature), as the spec says the access token is. */
function fakeJwt(): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const payload = { sub: 'sample-merchant', iat: Math.floor(Date.now() / 1000) };
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}.${randomBytes(32).toString('base64url')}`;
}
