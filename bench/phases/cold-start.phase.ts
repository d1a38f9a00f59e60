import { BenchChild } from '../child-processes.js';
import { postJson } from '../http-post.js';
import { ACK_BODY, NOTIFICATION_PATH_WITH_TOKEN, notificationBody } from '../notification-sample.js';
import { ADAPTERS } from '../settings.js';
import { median } from '../stats.js';
import { formatRatio, printTable } from '../table.js';

const TARGET = 1.3;

/**
 * Item 7: process start to first acknowledged notification, the plain Nest app against the same app with the package.
 * The earlier phases started the same scripts, so the file cache is warm for both.
 */
export async function measureColdStart(rounds: number): Promise<void> {
  const rows = [];
  for (const adapter of ADAPTERS) {
    const withoutMs: number[] = [];
    const withMs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      withoutMs.push(await timeToFirstAck('./servers/plain-nest.server.js', adapter));
      withMs.push(await timeToFirstAck('./servers/package.server.js', adapter));
    }
    const ratio = median(withMs.map((ms, round) => ms / withoutMs[round]!));
    const met = ratio <= TARGET ? 'yes' : 'no';
    rows.push([adapter, median(withoutMs), median(withMs), formatRatio(ratio), `≤ ${TARGET.toFixed(2)}x`, met]);
  }
  printTable(
    `Cold start: process start to first ack, ${rounds} rounds (medians)`,
    ['Adapter', 'without package ms', 'with package ms', 'Ratio', 'Target', 'Met'],
    rows,
  );
}

async function timeToFirstAck(script: string, adapter: string): Promise<number> {
  const start = performance.now();
  const server = await BenchChild.start(`cold-start ${script}`, script, [`--adapter=${adapter}`]);
  try {
    const reply = await postJson(server.port, NOTIFICATION_PATH_WITH_TOKEN, notificationBody(0));
    if (reply.status !== 200 || reply.body !== ACK_BODY) {
      throw new Error(`${script} (${adapter}): the first notification was not acknowledged`);
    }
    return performance.now() - start;
  } finally {
    await server.stop();
  }
}
