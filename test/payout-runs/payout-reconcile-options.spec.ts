import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { PayoutRunsModule, type PayoutReconcileOptions } from 'nestjs-payouts/payout-runs';
import { resolvePayoutRunsOptions } from '../../lib/payout-runs/payout-runs-options.js';

const connection = { host: '127.0.0.1', port: 6379 };
const lookup: PayoutReconcileOptions['lookup'] = () => 'unknown';

describe('the reconcile option of payout runs', () => {
  it('is off without it, and fills in the defaults with it', () => {
    expect(resolvePayoutRunsOptions({ connection, rateLimit: false }).reconcile).toBeUndefined();
    expect(resolvePayoutRunsOptions({ connection, rateLimit: false, reconcile: { lookup } }).reconcile).toEqual({
      lookup,
      settleAfterMs: 60_000,
      sweepEveryMs: 60_000,
      giveUpAfterMs: 24 * 60 * 60_000,
      lookupTimeoutMs: 10_000,
    });
  });

  it.each([
    [{ lookup: 'GET /payouts' }, 'reconcile.lookup', "a function answering 'created', 'absent' or 'unknown'"],
    [{ lookup, settleAfter: 1000 }, 'reconcile.settleAfter', 'a known option name (did you mean "settleAfterMs"?)'],
    [{ lookup, sweepEveryMs: 0 }, 'reconcile.sweepEveryMs', 'a whole number from 100 to 86400000'],
    [{ lookup, giveUpAfterMs: 1.5 }, 'reconcile.giveUpAfterMs', 'a whole number from 1000 to 34560000000'],
    [{ lookup, lookupTimeoutMs: -1 }, 'reconcile.lookupTimeoutMs', 'a whole number from 10 to 600000'],
  ])('refuses %j at bootstrap, naming the option', async (reconcile, option, expected) => {
    @Module({
      imports: [
        PayoutRunsModule.forRoot({ connection, rateLimit: false, reconcile: reconcile as PayoutReconcileOptions }),
      ],
    })
    class AppModule {}
    await expect(
      NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false }),
    ).rejects.toThrow(`PayoutRunsModule option "${option}" is invalid: expected ${expected}.`);
  });
});
