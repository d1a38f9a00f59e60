import { BenchChild } from '../child-processes.js';
import type { MemorySample } from '../protocol.js';
import { MIB } from '../stats.js';
import { printTable } from '../table.js';
import type { FillResult } from '../workers/dedupe-memory.worker.js';

/**
 * The route's keys: the sample's (79 characters), and the longest it keeps as they read, 256 characters (a longer key
 * becomes `sha256:` and a 43-character digest), which bounds what one entry costs.
 */
const KEY_LENGTHS = [0, 256] as const;

/** Item 6: memory of the default dedupe store after each checkpoint's number of distinct notifications. */
export async function measureDedupeMemory(checkpoints: readonly number[]): Promise<void> {
  const rows = [];
  for (const keyLength of KEY_LENGTHS) {
    const worker = await BenchChild.start(
      `dedupe-memory-${keyLength}`,
      './workers/dedupe-memory.worker.js',
      [`--key-length=${keyLength}`],
      ['--expose-gc'],
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
