import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** One request as the stub received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body bytes as UTF-8 text, exactly as sent. */
  body: string;
  /** Over TLS, the common name of the client certificate presented, if any. */
  clientCertificate?: string;
}

/**
 * Takes the connection over after the request was read and writes raw bytes to it (see `hostile-replies.ts`).
 * It must close the socket in the end: the stub's HTTP parser is left waiting for a response that never comes.
 */
export type SocketScript = (socket: Socket) => void | Promise<void>;

/**
 * What the stub does with a request: reply (a string or Buffer body is sent as is, anything else as JSON),
 * `'destroy'` the socket after reading the request, `'hang'` without replying, or run a socket script.
 */
export type StubReply =
  { status: number; headers?: Record<string, string>; body?: unknown } | 'destroy' | 'hang' | { script: SocketScript };

/** Decides the reply; a promise lets a test hold replies back until several requests have arrived. */
export type StubHandler = (request: RecordedRequest, index: number) => StubReply | Promise<StubReply>;

export const CREATED_PAYOUT = { id: 'po_123', status: 'pending' };

/** A payouts API on 127.0.0.1 that records every request and answers as scripted. */
export class PayoutsApiStub {
  readonly requests: RecordedRequest[] = [];
  /** Every TCP connection accepted so far, open or closed. */
  readonly connections: Socket[] = [];
  private handler: StubHandler = () => ({ status: 201, body: CREATED_PAYOUT });

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    /** The base URL to configure, without the `/payouts` path. */
    readonly baseUrl: string,
  ) {}

  /** Plain HTTP, or HTTPS with these TLS options (certificate, and a CA to ask clients for certificates). */
  static async start(tls?: HttpsServerOptions): Promise<PayoutsApiStub> {
    const server = tls ? createHttpsServer(tls) : createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const stub = new PayoutsApiStub(server, `${tls ? 'https' : 'http'}://127.0.0.1:${port}`);
    server.on('connection', (socket) => stub.connections.push(socket));
    server.on('request', (request, response) => stub.receive(request, response));
    return stub;
  }

  /** Answers the requests in this order; the last reply repeats. */
  reply(...replies: StubReply[]): void {
    this.handler = (_request, index) => replies[Math.min(index, replies.length - 1)]!;
  }

  handle(handler: StubHandler): void {
    this.handler = handler;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private receive(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded: RecordedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        ...clientCertificateOf(request.socket),
      };
      this.requests.push(recorded);
      const reply = this.handler(recorded, this.requests.length - 1);
      void Promise.resolve(reply).then((settled) => this.send(settled, request, response));
    });
  }

  private send(reply: StubReply, request: IncomingMessage, response: ServerResponse): void {
    if (reply === 'destroy') {
      request.socket.destroy();
    } else if (typeof reply === 'object' && 'script' in reply) {
      void reply.script(request.socket);
    } else if (reply !== 'hang') {
      const body =
        typeof reply.body === 'string' || Buffer.isBuffer(reply.body) ? reply.body : JSON.stringify(reply.body ?? {});
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      response.end(body);
    }
  }
}

function clientCertificateOf(socket: Socket): Pick<RecordedRequest, 'clientCertificate'> {
  const peer = 'getPeerCertificate' in socket ? (socket as TLSSocket).getPeerCertificate() : undefined;
  return peer?.subject ? { clientCertificate: String(peer.subject.CN) } : {};
}

let portNineRefused: Promise<void> | undefined;

/**
 * A loopback port where nothing listens, so connecting is refused: port 9. A port taken with `listen(0)` and closed
 * again may be handed to another spec's server meanwhile (spec files run side by side on a busy machine), which would
 * then answer; port 9 lies below the range `listen(0)` picks from, and nothing on a test machine serves it. Checked
 * once, so that a machine where something does fails here, saying so, rather than in the assertions.
 */
export async function refusingPort(): Promise<number> {
  portNineRefused ??= new Promise<void>((resolve, reject) => {
    const socket = connect(9, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      reject(new Error('Something listens on 127.0.0.1:9; the specs need nothing there'));
    });
    socket.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? resolve() : reject(error)));
  });
  await portNineRefused;
  return 9;
}

/** A base URL at `refusingPort()`. */
export async function refusingBaseUrl(): Promise<string> {
  return `http://127.0.0.1:${await refusingPort()}`;
}
