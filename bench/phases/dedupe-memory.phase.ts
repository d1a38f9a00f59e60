import { BenchChild } from '../child-processes.js';
import type { MemorySample } from '../protocol.js';
import { MIB } from '../stats.js';
import { printTable } from '../table.js';
import type { FillResult } from '../workers/dedupe-memory.worker.js';

/** Item 6: memory of the default dedupe store after each checkpoint's number of distinct notifications. */
export async function measureDedupeMemory(checkpoints: readonly number[]): Promise<void> {
  const worker = await BenchChild.start('dedupe-memory', './workers/dedupe-memory.worker.js', [], ['--expose-gc']);
  try {
    const baseline = await worker.call<MemorySample>('memory');
    const rows = [];
    for (const total of checkpoints) {
      const { entries, microsPerNotification } = await worker.call<FillResult>('fill', total, 120_000);
      const memory = await worker.call<MemorySample>('memory');
      const heapGrowth = memory.heapUsedBytes - baseline.heapUsedBytes;
      rows.push([
        total.toLocaleString('en-US'),
        entries.toLocaleString('en-US'),
        memory.rssBytes / MIB,
        memory.heapUsedBytes / MIB,
        heapGrowth / MIB,
        Math.round(heapGrowth / entries),
        microsPerNotification,
      ]);
    }
    printTable(
      'Dedupe store: default InMemoryNotificationDedupeStore (heap after a full GC; time of claim + complete)',
      ['Notifications', 'Entries kept', 'RSS MiB', 'Heap MiB', 'Heap growth MiB', 'Bytes/entry', 'µs/notification'],
      rows,
    );
  } finally {
    await worker.stop();
  }
}
