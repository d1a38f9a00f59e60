import autocannon from 'autocannon';
import { BenchChild } from '../child-processes.js';
import { ACK_BODY, NOTIFICATION_PATH_WITH_TOKEN, notificationBody } from '../notification-sample.js';
import type { MemorySample } from '../protocol.js';
import { MIB } from '../stats.js';
import { printTable } from '../table.js';
import type { FillResult } from '../workers/dedupe-memory.worker.js';

/**
 * The route's keys: the sample's (79 characters), and the longest it keeps as they read, 256 characters (a longer key
 * becomes `sha256:` and a 43-character digest), which bounds what one entry costs.
 */
const KEY_LENGTHS = [0, 256] as const;

/** Distinct notifications sent through the route; below the store's default `maxEntries`, so all are kept. */
const ROUTE_NOTIFICATIONS = 60_000;
/** Sent first, so that what the route allocates once (caches, connections, compiled code) is in the baseline. */
const ROUTE_WARM_UP = 2_000;

/**
 * Item 6: memory of the default dedupe store after each checkpoint's number of distinct notifications, then what a
 * remembered notification costs measured through the route, whose keys are built from the parsed notification.
 */
export async function measureDedupeMemory(checkpoints: readonly number[]): Promise<void> {
  await measureStoreMemory(checkpoints);
  await measureRouteMemory();
}

async function measureStoreMemory(checkpoints: readonly number[]): Promise<void> {
  const rows = [];
  for (const keyLength of KEY_LENGTHS) {
    const worker = await BenchChild.start(
      `dedupe-memory-${keyLength}`,
      './workers/dedupe-memory.worker.js',
      [`--key-length=${keyLength}`],
      { execArgv: ['--expose-gc'] },
    );
    try {
      const baseline = await worker.call<MemorySample>('memory');
      for (const total of checkpoints) {
        const { entries, microsPerNotification } = await worker.call<FillResult>('fill', total, 120_000);
        const memory = await worker.call<MemorySample>('memory');
        const heapGrowth = memory.heapUsedBytes - baseline.heapUsedBytes;
        rows.push([
          keyLength === 0 ? 'sample (79)' : String(keyLength),
          total.toLocaleString('en-US'),
          entries.toLocaleString('en-US'),
          memory.rssBytes / MIB,
          memory.heapUsedBytes / MIB,
          heapGrowth / MIB,
          Math.round(heapGrowth / entries),
          microsPerNotification,
        ]);
      }
    } finally {
      await worker.stop();
    }
  }
  printTable(
    'Dedupe store: default InMemoryNotificationDedupeStore (heap after a full GC; time of claim + complete)',
    [
      'Key chars',
      'Notifications',
      'Entries kept',
      'RSS MiB',
      'Heap MiB',
      'Heap growth MiB',
      'Bytes/entry',
      'µs/notification',
    ],
    rows,
  );
}

/**
 * The package's server on each adapter, with the default store: heap growth over `ROUTE_NOTIFICATIONS` distinct
 * notifications divided by the entries the store gained. The store measured directly is given ready-made keys; the
 * route builds each from the strings of a parsed body, which is what a remembered notification costs in an app.
 */
async function measureRouteMemory(): Promise<void> {
  const rows = [];
  let sequence = 1;
  for (const adapter of ['express', 'fastify']) {
    const server = await BenchChild.start(
      `dedupe-route-${adapter}`,
      './servers/package.server.js',
      [`--adapter=${adapter}`],
      { execArgv: ['--expose-gc'] },
    );
    try {
      const send = async (amount: number) => {
        let failures = 0;
        await autocannon({
          url: `http://127.0.0.1:${server.port}`,
          connections: 10,
          amount,
          timeout: 10,
          requests: [
            {
              method: 'POST',
              path: NOTIFICATION_PATH_WITH_TOKEN,
              headers: { 'content-type': 'application/json' },
              setupRequest: (request) => ({ ...request, body: notificationBody(sequence++) }),
              onResponse: (status, body) => {
                if (status !== 200 || body !== ACK_BODY) failures++;
              },
            },
          ],
        });
        if (failures > 0) throw new Error(`${adapter}: ${failures} notifications not acknowledged`);
      };
      await send(ROUTE_WARM_UP);
      const baseline = await server.call<MemorySample>('memory');
      await send(ROUTE_NOTIFICATIONS);
      const memory = await server.call<MemorySample>('memory');
      const heapGrowth = memory.heapUsedBytes - baseline.heapUsedBytes;
      rows.push([
        adapter,
        ROUTE_NOTIFICATIONS.toLocaleString('en-US'),
        memory.heapUsedBytes / MIB,
        heapGrowth / MIB,
        Math.round(heapGrowth / ROUTE_NOTIFICATIONS),
      ]);
    } finally {
      await server.stop();
    }
  }
  printTable(
    'Dedupe store through the route: default store, sample keys (heap of the server after a full GC)',
    ['Adapter', 'Notifications', 'Heap MiB', 'Heap growth MiB', 'Bytes/notification'],
    rows,
  );
}
