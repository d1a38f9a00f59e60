import { BenchChild } from '../child-processes.js';
import type { BenchSettings } from '../settings.js';
import { median } from '../stats.js';
import { formatRatio, printTable } from '../table.js';
import type { ClientRunArgs, ClientRunResult, PayoutClient } from '../workers/payouts-client.worker.js';

const CONCURRENCY = 32;
const CLIENTS: PayoutClient[] = ['createPayout', 'HttpService.post'];
const TARGET = 0.95;

/** Item 5: the payouts client against a local stub, both clients in one worker process, interleaved. */
export async function measurePayoutsClient(settings: BenchSettings): Promise<void> {
  const stub = await BenchChild.start('payouts-stub', './servers/payouts-stub.server.js');
  try {
    const worker = await BenchChild.start('payouts-client', './workers/payouts-client.worker.js', [
      `--stub-port=${stub.port}`,
    ]);
    try {
      const run = (client: PayoutClient, seconds: number) => {
        const args: ClientRunArgs = { client, durationMs: seconds * 1000, concurrency: CONCURRENCY };
        return worker.call<ClientRunResult>('run', args, args.durationMs + 30_000);
      };
      for (const client of CLIENTS) await run(client, settings.warmupSeconds);
      const rounds: Map<PayoutClient, ClientRunResult>[] = [];
      for (let round = 0; round < settings.rounds; round++) {
        const samples = new Map<PayoutClient, ClientRunResult>();
        for (const client of CLIENTS) samples.set(client, await run(client, settings.durationSeconds));
        rounds.push(samples);
      }
      report(settings, rounds);
    } finally {
      await worker.stop();
    }
  } finally {
    await stub.stop();
  }
}

function report(settings: BenchSettings, rounds: Map<PayoutClient, ClientRunResult>[]): void {
  const medianOf = (client: PayoutClient, pick: (result: ClientRunResult) => number) =>
    median(rounds.map((round) => pick(round.get(client)!)));
  const perRound = (pick: (pkg: ClientRunResult, raw: ClientRunResult) => number) =>
    median(rounds.map((round) => pick(round.get('createPayout')!, round.get('HttpService.post')!)));

  printTable(
    `Payouts client: ${settings.rounds} rounds × ${settings.durationSeconds} s, ` +
      `${CONCURRENCY} concurrent calls (medians)`,
    ['Client', 'calls/s', 'p50 ms', 'p99 ms', 'mean ms', 'client CPU µs/call'],
    CLIENTS.map((client) => [
      client === 'createPayout' ? '5 PayoutsService.createPayout' : '5 raw HttpService.post',
      medianOf(client, (result) => result.callsPerSecond),
      medianOf(client, (result) => result.p50Ms),
      medianOf(client, (result) => result.p99Ms),
      medianOf(client, (result) => result.meanMs),
      medianOf(client, (result) => result.cpuMicrosPerCall),
    ]),
  );
  const ratio = perRound((pkg, raw) => pkg.callsPerSecond / raw.callsPerSecond);
  const met = ratio >= TARGET ? 'yes' : 'no';
  const micros = (value: number) => Math.round(value).toString();
  printTable(
    'Payouts client ratio and per-call overhead (medians of per-round figures)',
    ['Measure', 'Value', 'Target', 'Met'],
    [
      ['createPayout ÷ HttpService.post, calls/s', formatRatio(ratio), `≥ ${TARGET.toFixed(2)}x`, met],
      ['added mean latency per call, µs', micros(perRound((pkg, raw) => (pkg.meanMs - raw.meanMs) * 1000))],
      ['added client CPU per call, µs', micros(perRound((pkg, raw) => pkg.cpuMicrosPerCall - raw.cpuMicrosPerCall))],
    ],
  );
}
