import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runChild } from '../child-main.js';

/** The payouts API as the client benchmark sees it: accepts every payout at once. */
const CREATED_BODY = JSON.stringify({ id: 'po_3KfZ8w', status: 'PENDING' });

await runChild(async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end(CREATED_BODY));
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
