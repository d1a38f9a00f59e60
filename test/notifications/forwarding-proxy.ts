import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ForwardingProxy {
  /** URL of `path` through the proxy. */
  url(path: string): string;
  close(): Promise<void>;
}

/**
 * A reverse proxy in front of the app, as a load balancer would be: it forwards each request to `target` and appends
 * the client's address to `X-Forwarded-For`, keeping what the client sent before it. Every test client connects from
 * 127.0.0.1, so the proxy reports `clientAddress` instead, the address the client would have on the internet.
 */
export async function startForwardingProxy(target: string, clientAddress: string): Promise<ForwardingProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    const sent = incoming.headers['x-forwarded-for'];
    const forwarded = sent === undefined ? clientAddress : `${String(sent)}, ${clientAddress}`;
    const proxied = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, 'x-forwarded-for': forwarded },
        agent: false,
      },
      (reply) => {
        outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(outgoing);
      },
    );
    proxied.on('error', () => outgoing.destroy());
    incoming.pipe(proxied);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}/${path.replace(/^\//, '')}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
