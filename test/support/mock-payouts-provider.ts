import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the provider does with one payout request: create it (`201`), refuse it (a 4xx), throttle it (`429` or `503`
 * with `Retry-After`: not processed), fail it (a 5xx after processing), or reset the connection after reading the
 * whole body (processed, but the caller never learns it).
 */
export type ProviderReply =
  | { kind: 'created' }
  | { kind: 'refused'; status: number; body?: object }
  | { kind: 'throttled'; status: 429 | 503; retryAfterSeconds: number }
  | { kind: 'failed'; status: number }
  | { kind: 'reset' };

/** One request as the provider received it, once its body was read. */
export interface ProviderRequest {
  readonly requestId: string;
  /** `Date.now()` when the body had arrived. */
  readonly at: number;
  readonly reply: ProviderReply['kind'];
}

/** Decides the reply from the `request_id` and how many requests with it came before. */
export type ProviderPlan = (requestId: string, seenBefore: number) => ProviderReply;

/**
 * A payouts provider on 127.0.0.1 (node:http) that records every `request_id` it receives and answers after a latency
 * of `minLatencyMs` to `maxLatencyMs`, as `plan` says. Only `429` and `503` leave a payout unprocessed: any other
 * request counts as processed, the reset ones included.
 */
export class MockPayoutsProvider {
  readonly requests: ProviderRequest[] = [];
  private readonly seen = new Map<string, number>();
  /** The replies held back, by `request_id`, until their release (see `hold`). */
  private readonly held = new Map<string, Promise<void>>();

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    /** The base URL to configure: POST `<baseUrl>/payouts`. */
    readonly baseUrl: string,
    private readonly plan: ProviderPlan,
    private readonly latency: { min: number; max: number },
  ) {}

  static async start(
    plan: ProviderPlan = () => ({ kind: 'created' }),
    { minLatencyMs = 20, maxLatencyMs = 50 }: { minLatencyMs?: number; maxLatencyMs?: number } = {},
  ): Promise<MockPayoutsProvider> {
    const server = createServer({ keepAliveTimeout: 30_000 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const provider = new MockPayoutsProvider(server, `http://127.0.0.1:${port}/v1`, plan, {
      min: minLatencyMs,
      max: maxLatencyMs,
    });
    server.on('request', (request, response) => provider.receive(request, response));
    return provider;
  }

  /** The requests that counted as processed (all but `429` and `503`), per `request_id`. */
  processedCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { requestId, reply } of this.requests) {
      if (reply !== 'throttled') counts.set(requestId, (counts.get(requestId) ?? 0) + 1);
    }
    return counts;
  }

  /** The most requests received within any window of `windowMs`, from the recorded arrival times. */
  busiestWindow(windowMs: number): number {
    const times = this.requests.map((request) => request.at).sort((a, b) => a - b);
    let busiest = 0;
    let start = 0;
    for (let end = 0; end < times.length; end++) {
      while (times[end]! - times[start]! >= windowMs) start++;
      busiest = Math.max(busiest, end - start + 1);
    }
    return busiest;
  }

  /**
   * Holds back the replies to `requestId` until the function returned is called: the request is received and recorded
   * (processed) as usual, and the caller waits for its outcome meanwhile.
   */
  hold(requestId: string): () => void {
    let release!: () => void;
    this.held.set(requestId, new Promise<void>((resolve) => (release = resolve)));
    return release;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private receive(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let requestId = '';
      try {
        requestId = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request_id?: unknown }).request_id);
      } catch {
        requestId = '(unreadable)';
      }
      const seenBefore = this.seen.get(requestId) ?? 0;
      this.seen.set(requestId, seenBefore + 1);
      const reply = this.plan(requestId, seenBefore);
      this.requests.push({ requestId, at: Date.now(), reply: reply.kind });
      const { min, max } = this.latency;
      const answer = () =>
        setTimeout(() => this.answer(reply, requestId, request, response), min + Math.random() * (max - min));
      const held = this.held.get(requestId);
      if (held) void held.then(answer);
      else answer();
    });
  }

  private answer(reply: ProviderReply, requestId: string, request: IncomingMessage, response: ServerResponse): void {
    const json = (status: number, body: object, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    };
    switch (reply.kind) {
      case 'created':
        return json(201, { id: `po_${requestId}`, status: 'pending' });
      case 'refused':
        return json(reply.status, reply.body ?? { error: 'invalid_beneficiary' });
      case 'throttled':
        return json(reply.status, { error: 'slow_down' }, { 'retry-after': String(reply.retryAfterSeconds) });
      case 'failed':
        return json(reply.status, { error: 'internal' });
      case 'reset':
        request.socket.destroy();
    }
  }
}
