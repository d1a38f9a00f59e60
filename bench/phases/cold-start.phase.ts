import { BenchChild } from '../child-processes.js';
import { postJson } from '../http-post.js';
import { ACK_BODY, NOTIFICATION_PATH_WITH_TOKEN, notificationBody } from '../notification-sample.js';
import { processCpuMicros } from '../process-cpu.js';
import { ADAPTERS } from '../settings.js';
import { median, spreadOf } from '../stats.js';
import { formatSpread, printTable } from '../table.js';

const TARGET = 1.2;

interface ColdStart {
  readonly wallMs: number;
  /** CPU time (user + system) the server used up to its first ack, read from `/proc`; NaN without /proc. */
  readonly cpuMs: number;
}

/**
 * Item 7: process start to first acknowledged notification, the plain Nest app against the same app with the package.
 * The earlier phases started the same scripts, so the file cache is warm for both. The server's own CPU time up to
 * the first ack is the primary figure: on a shared machine the wall time follows whatever else runs.
 */
export async function measureColdStart(rounds: number): Promise<void> {
  const rows = [];
  for (const adapter of ADAPTERS) {
    const without: ColdStart[] = [];
    const withPackage: ColdStart[] = [];
    for (let round = 0; round < rounds; round++) {
      without.push(await timeToFirstAck('./servers/plain-nest.server.js', adapter));
      withPackage.push(await timeToFirstAck('./servers/package.server.js', adapter));
    }
    const byCpu = spreadOf(withPackage.map((start, round) => start.cpuMs / without[round]!.cpuMs));
    const byWall = spreadOf(withPackage.map((start, round) => start.wallMs / without[round]!.wallMs));
    rows.push([
      adapter,
      median(without.map((start) => start.cpuMs)),
      median(withPackage.map((start) => start.cpuMs)),
      median(without.map((start) => start.wallMs)),
      median(withPackage.map((start) => start.wallMs)),
      formatSpread(byCpu),
      formatSpread(byWall),
      `≤ ${TARGET.toFixed(2)}x`,
      byCpu.median <= TARGET ? 'yes' : 'no',
      byWall.median <= TARGET ? 'yes' : byWall.min <= TARGET ? 'within spread' : 'no',
    ]);
  }
  printTable(
    `Cold start: process start to first ack, ${rounds} rounds (medians; ratios with the lowest–highest round)`,
    [
      'Adapter',
      'without CPU ms',
      'with CPU ms',
      'without wall ms',
      'with wall ms',
      'with ÷ without, by CPU',
      'by wall time',
      'Target',
      'Met by CPU',
      'Met by wall time',
    ],
    rows,
  );
}

async function timeToFirstAck(script: string, adapter: string): Promise<ColdStart> {
  const start = performance.now();
  const server = await BenchChild.start(`cold-start ${script}`, script, [`--adapter=${adapter}`]);
  try {
    const reply = await postJson(server.port, NOTIFICATION_PATH_WITH_TOKEN, notificationBody(0));
    if (reply.status !== 200 || reply.body !== ACK_BODY) {
      throw new Error(`${script} (${adapter}): the first notification was not acknowledged`);
    }
    const wallMs = performance.now() - start;
    const cpuMicros = processCpuMicros(server.pid);
    return { wallMs, cpuMs: cpuMicros === undefined ? Number.NaN : cpuMicros / 1000 };
  } finally {
    await server.stop();
  }
}
