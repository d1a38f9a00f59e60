import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runChild } from '../child-main.js';
import { argValue } from '../command-line.js';

/**
 * The payouts API as the client benchmark sees it: accepts every payout, at once or, with `--latency-ms=<min>-<max>`,
 * after a random delay in that range, as a real provider would.
 */
const CREATED_BODY = JSON.stringify({ id: 'po_3KfZ8w', status: 'PENDING' });
const latency = argValue('latency-ms');
const [minLatencyMs = 0, maxLatencyMs = 0] = (latency ?? '0-0').split('-').map(Number);

await runChild(async () => {
  const server = createServer((req, res) => {
    req.resume();
    const reply = () => res.writeHead(201, { 'content-type': 'application/json' }).end(CREATED_BODY);
    req.on('end', () =>
      maxLatencyMs > 0 ? setTimeout(reply, minLatencyMs + Math.random() * (maxLatencyMs - minLatencyMs)) : reply(),
    );
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
});
