import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { HttpModule, HttpService } from '@nestjs/axios';
import { NestFactory } from '@nestjs/core';
import { PayoutsModule, PayoutsService } from 'nestjs-payouts';
import { firstValueFrom } from 'rxjs';
import { runChild } from '../child-main.js';
import { benchPayoutRequest } from './bench-payouts.js';
import { argValue } from '../command-line.js';
import { telemetryModeFromArgs, telemetryOption, telemetryProviders } from '../servers/telemetry-args.js';
import { mean, percentile } from '../stats.js';

/** 5. `createPayout` against a raw `HttpService.post` of the same body and headers, in one process. */
export type PayoutClient = 'createPayout' | 'HttpService.post';

export interface ClientRunArgs {
  readonly client: PayoutClient;
  readonly durationMs: number;
  readonly concurrency: number;
}

export interface ClientRunResult {
  readonly calls: number;
  readonly callsPerSecond: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU time of this process per call (user + system). */
  readonly cpuMicrosPerCall: number;
}

const API_KEY = 'bench-api-key';
const ACCESS_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl';
const stubPort = Number(argValue('stub-port'));
const baseUrl = `http://127.0.0.1:${stubPort}`;
/** `--telemetry=…` as `telemetry-args.ts` says. */
const telemetry = telemetryModeFromArgs();

@Injectable()
class PayoutClients {
  constructor(
    private readonly payouts: PayoutsService,
    private readonly http: HttpService,
  ) {}

  /** Each client's call, resolving with the reply status. */
  readonly call: Record<PayoutClient, () => Promise<number>> = {
    createPayout: async () => (await this.payouts.createPayout(benchPayoutRequest())).status,
    // What a user would write without the package.
    'HttpService.post': async () =>
      (
        await firstValueFrom(
          this.http.post(`${baseUrl}/payouts`, benchPayoutRequest(), {
            headers: {
              'X-API-Key': API_KEY,
              Authorization: `Bearer ${ACCESS_TOKEN}`,
              'Content-Type': 'application/json',
            },
            timeout: 10_000,
          }),
        )
      ).status,
  };
}

const telemetryModuleOption = await telemetryOption(telemetry);

@Module({
  imports: [
    PayoutsModule.forRoot({
      baseUrl,
      apiKey: API_KEY,
      accessToken: ACCESS_TOKEN,
      timeoutMs: 10_000,
      notifications: false,
      ...telemetryModuleOption,
    }),
    HttpModule,
  ],
  providers: [PayoutClients, ...telemetryProviders(telemetry)],
})
class ClientModule {}

/** `concurrency` callers, each sending its next payout as soon as the last one is answered, until the time is up. */
async function runClient(
  clients: PayoutClients,
  { client, durationMs, concurrency }: ClientRunArgs,
): Promise<ClientRunResult> {
  const call = clients.call[client];
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const deadline = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        const status = await call();
        if (status !== 201) throw new Error(`${client}: expected 201 from the stub, got ${status}`);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  return {
    calls: latencies.length,
    callsPerSecond: (latencies.length * 1000) / elapsedMs,
    meanMs: mean(latencies),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    cpuMicrosPerCall: (cpu.user + cpu.system) / latencies.length,
  };
}

await runChild(async () => {
  const app = await NestFactory.createApplicationContext(ClientModule, { logger: false });
  const clients = app.get(PayoutClients);
  return {
    commands: { run: (args) => runClient(clients, args as ClientRunArgs) },
    close: () => app.close(),
  };
});
