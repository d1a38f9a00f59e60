import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PayoutsConfigError } from 'nestjs-payouts';
import { payoutLedgerPostgres, type PayoutLedgerPostgresOptions } from 'nestjs-payouts/postgres';

/** The options are read when `payoutLedgerPostgres()` is called: a wrong one fails there, before any connection. */
describe('payoutLedgerPostgres() options', () => {
  // A real pool that is never used: it connects on a statement only, and no statement is run.
  const pool = new pg.Pool({ connectionString: 'postgresql://payouts:pg-password-9c1e@127.0.0.1:1/payouts' });
  afterAll(() => pool.end());

  const refusal = (options: unknown): PayoutsConfigError => {
    try {
      payoutLedgerPostgres(options as PayoutLedgerPostgresOptions);
    } catch (error) {
      expect(error).toBeInstanceOf(PayoutsConfigError);
      return error as PayoutsConfigError;
    }
    throw new Error('the options were taken');
  };

  it('takes a pool with every option left to its default, or each one set', () => {
    expect(payoutLedgerPostgres({ pool }).kind).toBe('postgres');
    expect(
      payoutLedgerPostgres({
        pool,
        schema: 'payouts_ledger',
        migrate: true,
        timeoutMs: 100,
        retentionDays: 400,
        preparedStatements: false,
      }).kind,
    ).toBe('postgres');
  });

  it.each([
    ['options', undefined, 'an object with pool'],
    ['pool', {}, 'a pool of node-postgres (npm install pg; new Pool({ connectionString }))'],
    ['schema', { schema: 'Payouts-Ledger' }, 'a lower-case name of letters, digits and "_", such as "payouts"'],
    ['migrate', { migrate: 'yes' }, 'true or false'],
    ['timeoutMs', { timeoutMs: 99 }, 'a whole number from 100 to 600000'],
    ['retentionDays', { retentionDays: 0.5 }, 'a whole number from 1 to 100000'],
    ['preparedStatements', { preparedStatements: 'false' }, 'true or false'],
  ])('refuses a wrong %s, naming it and what it takes', (option, wrong, expected) => {
    const options = wrong === undefined ? undefined : option === 'pool' ? wrong : { pool, ...wrong };
    const error = refusal(options);

    expect(error).toMatchObject({ option, expected, owner: 'payoutLedgerPostgres' });
    expect(error.message).toBe(`payoutLedgerPostgres option "${option}" is invalid: expected ${expected}.`);
  });

  it('refuses a key it does not know, such as a misspelt one, and never shows the connection string', () => {
    const error = refusal({ pool, prepareStatements: false });

    expect(error.option).toBe('prepareStatements');
    expect(error.expected).toContain('preparedStatements');
    expect(error.message).toContain('"prepareStatements"');
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain('pg-password-9c1e');
  });
});
