import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runChild } from '../child-main.js';
import { ACK_BODY } from '../notification-sample.js';

/** 1. The floor: node:http parsing the JSON body and acknowledging, no framework, no checks. */
await runChild(async () => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(ACK_BODY);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
});
