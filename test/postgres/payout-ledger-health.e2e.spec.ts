import { Controller, Get, Inject, type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PayoutsModule } from 'nestjs-payouts';
import { PayoutRunsModule } from 'nestjs-payouts/payout-runs';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { PayoutsHealthIndicator } from 'nestjs-payouts/terminus';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { freshDatabase } from './payout-ledger-test-support.js';

/** Terminus's reply: `info` or `error`, then the key's parts, then each part's fields. */
type HealthBody = Record<string, Record<string, Record<string, unknown>>>;

@Controller('health')
class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(PayoutsHealthIndicator) private readonly payouts: PayoutsHealthIndicator,
  ) {}

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.payouts.check('payouts', { timeoutMs: 2000 })]);
  }
}

describeWithPostgres('health checks of the PostgreSQL ledger', () => {
  describeWithRedis('over HTTP, with PostgreSQL stopped and started again', () => {
    let server: PostgresServer;
    let redis: RedisServer;
    let pool: pg.Pool;
    let app: INestApplication;
    let base: string;

    beforeAll(async () => {
      [server, redis] = await Promise.all([PostgresServer.start(), RedisServer.start()]);
      ({ pool } = await freshDatabase(server));
      @Module({
        imports: [
          TerminusModule,
          PayoutsModule.forRoot({
            baseUrl: 'http://127.0.0.1:9/v1',
            apiKey: 'health-ledger-api-key',
            accessToken: 'health-ledger-token',
            notifications: false,
          }),
          PayoutRunsModule.forRoot({
            connection: { host: '127.0.0.1', port: redis.port },
            rateLimit: false,
            ledger: payoutLedgerPostgres({ pool, migrate: true, timeoutMs: 1000 }),
          }),
        ],
        controllers: [HealthController],
        providers: [PayoutsHealthIndicator],
      })
      class AppModule {}
      app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
      await app.listen(0, '127.0.0.1');
      base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    }, 60_000);
    afterAll(async () => {
      await app?.close();
      await pool?.end();
      await Promise.all([server?.close(), redis?.close()]);
    });

    const ready = async () => {
      const response = await fetch(`${base}/health/ready`);
      return { status: response.status, body: (await response.json()) as HealthBody };
    };

    it('reports the ledger up, down while PostgreSQL is stopped (naming no connection detail), then up again', async () => {
      const up = await ready();
      await server.stop();
      const down = await ready();
      await server.restart();
      const back = await ready();

      expect(up.status).toBe(200);
      expect(up.body.info.payouts['payout-ledger']).toEqual({ status: 'up', latencyMs: expect.any(Number) });
      expect(up.body.info.payouts['payout-runs']).toMatchObject({ status: 'up', parked: 0 });
      expect(down.status).toBe(503);
      expect(down.body.error.payouts['payout-ledger']).toMatchObject({ status: 'down' });
      expect(down.body.error.payouts.problems).toEqual([
        expect.stringMatching(/^payout-ledger: /),
        expect.stringMatching(/^payout-runs: /),
      ]);
      expect(JSON.stringify(down.body)).not.toContain(server.dir);
      expect(back.status).toBe(200);
      expect(back.body.info.payouts['payout-ledger']).toMatchObject({ status: 'up' });
    });
  });
});
