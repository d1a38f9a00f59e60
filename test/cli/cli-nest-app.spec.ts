import { fileURLToPath } from 'node:url';
import { Injectable, type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PayoutsModule } from 'nestjs-payouts';
import { OnPaymentMethodAdded } from 'nestjs-payouts';
import type { PaymentMethodNotification } from 'nestjs-payouts';
import { runCli } from './run-cli.js';

const SECRET = 'cli-test-secret-4f9a';
const INVALID_CARD_OVERRIDES = fileURLToPath(new URL('./fixtures/invalid-card.json', import.meta.url));

@Injectable()
class RecordingListener {
  readonly received: PaymentMethodNotification[] = [];
  failuresLeft = 0;

  @OnPaymentMethodAdded()
  onAdded(notification: PaymentMethodNotification): void {
    this.received.push(notification);
    if (this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new Error('database unavailable');
    }
  }
}

@Module({
  imports: [
    PayoutsModule.forRoot({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'unused-api-key',
      accessToken: 'unused-access-token',
      notifications: { verification: { secret: { value: SECRET } } },
    }),
  ],
  providers: [RecordingListener],
})
class NotificationsAppModule {}

describe('nestjs-payouts simulate (against a Nest app)', () => {
  let app: INestApplication;
  let listener: RecordingListener;
  let route: string;

  beforeAll(async () => {
    app = await NestFactory.create(NotificationsAppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    route = `http://127.0.0.1:${port}/payouts/notifications`;
    listener = app.get(RecordingListener);
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(() => {
    listener.received.length = 0;
    listener.failuresLeft = 0;
  });

  it('is acknowledged on the first attempt, and the handler receives the notification', async () => {
    const run = await runCli(['simulate', '--url', `${route}?token=${SECRET}`, '--event', 'added']);

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /Attempt 1 at .*: HTTP 200 \{"ResultCode":0\} -> acknowledged\nDelivered on attempt 1\.\n$/,
    );
    expect(run.stdout).not.toContain(SECRET);
    expect(listener.received).toHaveLength(1);
    expect(listener.received[0]).toMatchObject({
      eventType: 'PAYMENT_METHOD_ADDED',
      shopper: { id: 'shp_7Qk2Lm9Xr4', email: 'shopper@example.com' },
      paymentMethod: { id: 'pmt_3Vb8Hs1Ty6', type: 'card', card: { lastFour: '4242' } },
    });
  });

  it('re-sends after the handler failed, and the second attempt is acknowledged', async () => {
    listener.failuresLeft = 1;

    const run = await runCli(['simulate', '--url', `${route}?token=${SECRET}`, '--interval-ms', '10']);

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Attempt 1 at .*: HTTP 5\d\d .* -> not acknowledged: replied with status 5\d\d;/);
    expect(run.stdout).toMatch(
      /Attempt 2 at .*: HTTP 200 \{"ResultCode":0\} -> acknowledged\nDelivered on attempt 2\.\n$/,
    );
    expect(listener.received).toHaveLength(2);
    expect(listener.received[1]).toEqual(listener.received[0]);
  });

  it('is never acknowledged with a wrong token: exit 1, and no handler runs', async () => {
    const run = await runCli(['simulate', '--url', `${route}?token=wrong`, '--attempts', '2', '--interval-ms', '10']);

    expect(run.code).toBe(1);
    expect(run.stdout.match(/HTTP 401 .* -> not acknowledged: replied with status 401;/g)).toHaveLength(2);
    expect(run.stdout).toContain(
      "Not delivered after 2 attempts: the payouts service would now e-mail the merchant's technical contact.",
    );
    expect(listener.received).toHaveLength(0);
  });

  it('is refused when the overrides make the notification invalid', async () => {
    const run = await runCli([
      'simulate',
      '--url',
      `${route}?token=${SECRET}`,
      '--attempts',
      '1',
      '--overrides',
      INVALID_CARD_OVERRIDES,
    ]);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /HTTP 400 .*paymentMethod\.card\.lastFour.* -> not acknowledged: replied with status 400;/,
    );
    expect(listener.received).toHaveLength(0);
  });
});
