import { AssertionError } from 'node:assert';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CredentialRedactor } from '../../payouts/credential-redactor.js';
import { isJsonObject } from '../../common/json-object.js';
import { ActiveFaultRule, type MockFaultHandle, type MockFaultRule } from './mock-fault-rule.js';
import type { MockFault } from './mock-fault.js';
import {
  type MockPayoutsApiOptions,
  type MockPayoutsApiSettings,
  resolveMockPayoutsApiOptions,
} from './mock-payouts-api-options.js';
import { type MockPayoutsCall, type MockPayoutsRequest, recordedHeaders } from './mock-payouts-call.js';
import { type ArrivedBody, answerPayoutsRequest, type MockAnswer, type MockPayout } from './mock-payouts-endpoint.js';

/** Bodies above this are not read: the mock answers 413, as an API with a body limit would. */
const MAX_BODY_BYTES = 64 * 1024;
/** Credentials shorter than this are not looked for by `assertNoSecretIn()`: "1" would be found everywhere. */
const MIN_SECRET_LENGTH = 4;
const FAULT_KINDS = new Set<string>([
  'status',
  'latency',
  'reset-before-commit',
  'reset-after-commit',
  'malformed-reply',
  'token-expired',
]);

type RecordedCall = { -readonly [K in keyof MockPayoutsCall]: MockPayoutsCall[K] };

/**
 * A payouts API on a free loopback port, to run `createPayout()` against in tests and on a developer's machine:
 * `POST /payouts` with both credential headers checked and the body validated by the interface's wallet sample, a
 * record of every request, and faults switched on per request or by rule.
 *
 * ```ts
 * const mock = await MockPayoutsApi.start();
 * // PayoutsModule.forRoot({ baseUrl: mock.baseUrl, apiKey: mock.apiKey, accessToken: mock.accessToken! })
 * mock.fail({ times: 1, when: { requestId: 'po-1' } }, MockFault.unavailable(1));
 * // … createPayout({ …, request_id: 'po-1' }) retries once and succeeds:
 * mock.callsFor('po-1').map((call) => call.status); // [503, 201]
 * await mock.close();
 * ```
 */
export class MockPayoutsApi {
  readonly #server: Server;
  readonly #settings: MockPayoutsApiSettings;
  readonly #calls: RecordedCall[] = [];
  readonly #payouts = new Map<string, MockPayout>();
  #rules: ActiveFaultRule[] = [];
  /** Every credential value received, for `assertNoSecretIn()`; never part of the record. */
  readonly #receivedCredentials = new Set<string>();
  readonly #closing = new AbortController();
  #closed: Promise<void> | undefined;

  private constructor(
    server: Server,
    settings: MockPayoutsApiSettings,
    /** The base URL to configure (`PayoutsModule`'s `baseUrl`), such as `http://127.0.0.1:40123`. */
    readonly baseUrl: string,
  ) {
    this.#server = server;
    this.#settings = settings;
  }

  /** Starts listening (on `127.0.0.1` and a free port unless told otherwise) and resolves once it does. */
  static async start(options: MockPayoutsApiOptions = {}): Promise<MockPayoutsApi> {
    const settings = resolveMockPayoutsApiOptions(options);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.port, settings.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const mock = new MockPayoutsApi(server, settings, baseUrlOf(server.address() as AddressInfo));
    server.on('request', (request: IncomingMessage, response: ServerResponse) => mock.#receive(request, response));
    return mock;
  }

  /** The `X-API-Key` value the mock accepts. */
  get apiKey(): string {
    return this.#settings.apiKey;
  }

  /** The bearer token the mock accepts; `undefined` when a function decides (the `accessToken` option). */
  get accessToken(): string | undefined {
    const { accessToken } = this.#settings;
    return typeof accessToken === 'string' ? accessToken : undefined;
  }

  /** Every request received, in order of arrival, each updated once it is answered. Credentials are hidden. */
  get calls(): readonly MockPayoutsCall[] {
    return this.#calls;
  }

  /** The requests that carried `request_id`, in order: the first attempt and every retry of one payout. */
  callsFor(requestId: string): MockPayoutsCall[] {
    return this.#calls.filter((call) => call.requestId === requestId);
  }

  /** The payouts created, by `request_id`. */
  get payouts(): ReadonlyMap<string, MockPayout> {
    return this.#payouts;
  }

  /**
   * Plays `fault` instead of the usual answer on the requests `rule` picks (see {@link MockFaultRule}); `{}` picks
   * every request. Rules are asked in the order they were switched on, and the first that picks a request plays its
   * fault.
   *
   * ```ts
   * mock.fail({ times: 1, when: { requestId } }, MockFault.rateLimited(2));
   * mock.fail({ nth: 3 }, MockFault.unavailable(1));
   * mock.fail({ probability: 0.05, seed: 42, when: { method: 'POST' } }, MockFault.resetAfterCommit());
   * ```
   */
  fail(rule: MockFaultRule, fault: MockFault): MockFaultHandle {
    if (!isJsonObject(fault) || !FAULT_KINDS.has(String(fault.kind))) {
      throw new TypeError('MockPayoutsApi.fail(): the fault must be made by one of the MockFault functions');
    }
    const active: ActiveFaultRule = new ActiveFaultRule(rule, fault, () => {
      this.#rules = this.#rules.filter((other) => other !== active);
    });
    this.#rules.push(active);
    return active;
  }

  /** Forgets every call, payout and fault rule, for a mock shared by several tests. */
  reset(): void {
    this.#calls.length = 0;
    this.#payouts.clear();
    this.#rules = [];
    this.#receivedCredentials.clear();
  }

  /**
   * Throws an `AssertionError` when `output` (log lines, printed text, an error's rendering) contains a credential:
   * the API key and token the mock accepts, or any credential value a request carried, as is or percent-encoded.
   * The message says which credential and which line, never its value.
   */
  assertNoSecretIn(output: string | readonly string[]): void {
    const lines = typeof output === 'string' ? [output] : output;
    const secrets: [string, string][] = [
      ['the API key', this.apiKey],
      ...(this.accessToken === undefined ? [] : [['the access token', this.accessToken] as [string, string]]),
      ...[...this.#receivedCredentials].map((value): [string, string] => ['a credential a request carried', value]),
    ];
    for (const [name, value] of secrets) {
      if (value.length < MIN_SECRET_LENGTH) continue;
      const redactor = new CredentialRedactor([value]);
      const line = lines.findIndex((text) => redactor.finds(text));
      if (line !== -1) {
        throw new AssertionError({ message: `${name} appears in the output (line ${line + 1} of ${lines.length})` });
      }
    }
  }

  /**
   * Stops listening, resets every open connection and drops the answers still waiting on a latency; resolves once the
   * server is closed. Calling it again returns the same promise.
   */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.#closing.abort();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closed;
  }

  #receive(request: IncomingMessage, response: ServerResponse): void {
    void this.#answer(request, response).catch(() => {
      // The `accessToken` function or `onCall` threw: answer 500 if nothing was sent yet.
      if (!response.headersSent && !response.destroyed) {
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"mock_failure"}');
      }
    });
  }

  async #answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const receivedAt = new Date();
    const { text, tooLarge } = await readBody(request);
    if (this.#closing.signal.aborted) return;
    const body = parseJson(text);
    const arrived: ArrivedBody = {
      contentType: request.headers['content-type'],
      tooLarge,
      notJson: !tooLarge && text !== '' && body === undefined,
    };
    const seen: MockPayoutsRequest = {
      method: request.method ?? '',
      path: request.url ?? '',
      headers: recordedHeaders(request.headers),
      body,
      requestId: isJsonObject(body) && typeof body.request_id === 'string' ? body.request_id : undefined,
      credentials: this.#checkCredentials(request),
    };
    const call: RecordedCall = {
      ...seen,
      index: this.#calls.length,
      receivedAt,
      fault: undefined,
      status: undefined,
      replyBody: undefined,
      reset: false,
      committed: false,
    };
    this.#calls.push(call);
    let fault: MockFault | undefined;
    try {
      fault = this.#pickFault(seen);
    } catch (error) {
      // A bug in a test's `when` function: said in the reply, where the test sees it.
      const message = error instanceof Error ? error.message : String(error);
      this.#reply(call, response, 500, {}, { error: 'mock_rule_failed', message });
      return;
    }
    call.fault = fault?.kind;
    if (!(await this.#wait(this.#settings.latencyMs))) return;
    while (fault?.kind === 'latency') {
      if (!(await this.#wait(fault.ms))) return;
      fault = fault.next;
    }
    if (fault?.kind === 'status') {
      this.#reply(call, response, fault.status, fault.headers, fault.body);
    } else if (fault?.kind === 'token-expired') {
      const headers = { 'www-authenticate': 'Bearer error="invalid_token", error_description="The token expired"' };
      this.#reply(call, response, 401, headers, { error: 'token_expired' });
    } else if (fault?.kind === 'reset-before-commit') {
      this.#reset(call, request);
    } else {
      const answer = answerPayoutsRequest(seen, arrived, this.#payouts);
      call.committed = answer.committed;
      if (fault?.kind === 'reset-after-commit') this.#reset(call, request);
      else if (fault?.kind === 'malformed-reply')
        this.#reply(call, response, answer.status, answer.headers, malformed(answer));
      else this.#reply(call, response, answer.status, answer.headers, answer.body);
    }
  }

  #checkCredentials(request: IncomingMessage): MockPayoutsRequest['credentials'] {
    const apiKey = request.headers['x-api-key'];
    const authorization = request.headers.authorization;
    for (const value of [apiKey, authorization, authorization?.replace(/^Bearer /, '')]) {
      if (typeof value === 'string' && value !== '') this.#receivedCredentials.add(value);
    }
    const { apiKey: expectedKey, accessToken: expectedToken } = this.#settings;
    const tokenIsValid = typeof expectedToken === 'string' ? (token: string) => token === expectedToken : expectedToken;
    return {
      apiKey: !apiKey ? 'missing' : apiKey === expectedKey ? 'valid' : 'wrong',
      accessToken: !authorization
        ? 'missing'
        : authorization.startsWith('Bearer ') && tokenIsValid(authorization.slice('Bearer '.length))
          ? 'valid'
          : 'wrong',
    };
  }

  /** The first rule that picks the request; every rule counts it (see `ActiveFaultRule.picks`). */
  #pickFault(request: MockPayoutsRequest): MockFault | undefined {
    const picked = [...this.#rules].filter((rule) => rule.picks(request));
    const [first] = picked;
    if (first === undefined) return undefined;
    first.fired += 1;
    return first.fault;
  }

  /** Waits `ms`; false when the mock was closed meanwhile, and the answer is then dropped. */
  async #wait(ms: number): Promise<boolean> {
    if (ms > 0) {
      try {
        await sleep(ms, undefined, { signal: this.#closing.signal });
      } catch {
        return false;
      }
    }
    return !this.#closing.signal.aborted;
  }

  /** Sends the reply, unless the client has closed the connection meanwhile (its deadline passed during a latency). */
  #reply(call: RecordedCall, response: ServerResponse, status: number, headers: object, body: unknown): void {
    if (!response.socket || response.socket.destroyed) {
      this.#settings.onCall?.(call);
      return;
    }
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? {});
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
    call.status = status;
    call.replyBody = typeof body === 'string' ? body : JSON.parse(text);
    this.#settings.onCall?.(call);
  }

  #reset(call: RecordedCall, request: IncomingMessage): void {
    request.socket.resetAndDestroy();
    call.reset = true;
    this.#settings.onCall?.(call);
  }
}

/** The usual body cut in the middle: a complete HTTP reply whose JSON does not parse. */
function malformed(answer: MockAnswer): string {
  const json = JSON.stringify(answer.body);
  return json.slice(0, Math.ceil(json.length / 2));
}

function baseUrlOf({ address, family, port }: AddressInfo): string {
  const unspecified = address === '0.0.0.0' || address === '::';
  const host = unspecified ? '127.0.0.1' : family === 'IPv6' ? `[${address}]` : address;
  return `http://${host}:${port}`;
}

/** The body as text, or `tooLarge` (and the rest of it not read) above `MAX_BODY_BYTES`. */
function readBody(request: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on('end', () => resolve({ text: tooLarge ? '' : Buffer.concat(chunks).toString('utf8'), tooLarge }));
    request.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
