import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type PayoutLedger, PayoutLedgerUnavailableError } from 'nestjs-payouts';
import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';
import { eventually } from '../support/eventually.js';
import { freshDatabase, rowsOf } from './payout-ledger-test-support.js';

/**
 * The outcome and the run's completion, on the ledger itself: the outcomes of a run commit side by side, and the run
 * is completed by a statement of its own once they are committed, exactly once, whatever stops in between.
 */
describeWithPostgres('the PostgreSQL ledger: outcomes and run completion (a real PostgreSQL)', () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  let url: string;
  let ledger: PayoutLedger;

  beforeAll(async () => {
    server = await PostgresServer.start({ durable: true });
    ({ pool, url } = await freshDatabase(server, 'settle'));
    // Generous: one test holds an outcome's transaction open while the completion waits for it.
    ledger = payoutLedgerPostgres({ pool, migrate: true, timeoutMs: 60_000 }).create({ account: 'default' });
    await ledger.open?.();
  }, 60_000);
  afterAll(async () => {
    await ledger?.close?.();
    await pool?.end();
    await server?.close();
  }, 60_000);

  const claimRun = async (runId: string, count: number) => {
    const items = Array.from({ length: count }, (_, i) => ({
      requestId: `${runId}-${i}`,
      fingerprint: `fp-${runId}-${i}`,
      request: { request_id: `${runId}-${i}` },
    }));
    const claims = await ledger.claim(runId, items);
    expect(claims.map((claim) => claim.verdict)).toEqual(items.map(() => 'queued'));
    return items.map((item) => item.requestId);
  };
  const completedAt = async (runId: string) =>
    (await rowsOf(pool, 'SELECT completed_at FROM nestjs_payouts.payout_runs WHERE run_id = $1', [runId]))[0]!
      .completed_at;
  const completers = async (runId: string) =>
    (
      await rowsOf(
        pool,
        'SELECT request_id FROM nestjs_payouts.payouts WHERE run_id = $1 AND completes_run ORDER BY 1',
        [runId],
      )
    ).map((row) => row.request_id);

  /** Resolves once a statement waits for a lock of `locktype` (a transaction's locks belong to no database). */
  const waitingFor = (locktype: string, what: string) =>
    eventually(
      async () =>
        (
          await rowsOf(
            pool,
            `SELECT 1 FROM pg_locks WHERE locktype = $1 AND NOT granted AND (database IS NULL OR database = ` +
              `(SELECT oid FROM pg_database WHERE datname = current_database()))`,
            [locktype],
          )
        ).length === 1 || undefined,
      10_000,
      what,
    );

  it('writes the sending mark once when two attempts begin a payout at once: the second finds it, or takes it over when told to', async () => {
    const [first, second] = await claimRun('begun-twice', 2);
    const slow = await pool.connect();
    try {
      for (const [id, takeOver] of [
        [first!, false],
        [second!, true],
      ] as const) {
        const t1 = randomUUID();
        // The first attempt's mark, written in a transaction left open.
        await slow.query('BEGIN');
        const { rows } = await slow.query(
          `SELECT step, attempt FROM nestjs_payouts.payout_begin('default', $1, $2, false)`,
          [id, t1],
        );
        expect(rows).toEqual([{ step: 'send', attempt: 1 }]);
        const again = ledger.begin(id, 'begun-twice', randomUUID(), takeOver);
        await waitingFor('transactionid', 'the second attempt waiting for the first');
        await slow.query('COMMIT');

        expect(await again).toEqual(
          takeOver ? { step: 'send', attempt: 2, resolution: undefined } : { step: 'interrupted' },
        );
        expect(await ledger.read(id)).toMatchObject({ state: 'sending', attempt: takeOver ? 2 : 1 });
        // The first attempt's outcome finds its mark, or finds it taken over.
        expect(await ledger.settle(id, 'begun-twice', t1, 'sent', {})).toBe(takeOver ? 'lost' : 'settled');
      }
      expect(await ledger.begin('never-claimed', 'begun-twice', randomUUID(), false)).toEqual({ step: 'missing' });
    } finally {
      slow.release();
    }
  });

  it('tries the sending mark again when the payout becomes sendable between the write that found a mark and the read that says why', async () => {
    const [id] = await claimRun('changed-between', 1);
    const [t1, t2] = [randomUUID(), randomUUID()];
    expect(await ledger.begin(id!, 'changed-between', t1, false)).toMatchObject({ step: 'send', attempt: 1 });
    // A gate before every UPDATE of the payouts, after the statement's snapshot is taken: the first in a transaction
    // waits while the test holds the advisory lock. The begin below thus reads the row as it was (the first attempt's
    // mark, so its UPDATE matches nothing), and the read that follows, a statement of its own, reads it as it is.
    await rowsOf(
      pool,
      `CREATE FUNCTION public.gate_payout_updates() RETURNS trigger LANGUAGE plpgsql AS $fn$
       BEGIN
         IF current_setting('gate.passed', true) IS DISTINCT FROM 'yes' THEN
           PERFORM set_config('gate.passed', 'yes', true);
           PERFORM pg_advisory_xact_lock_shared(4242);
         END IF;
         RETURN NULL;
       END $fn$`,
    );
    await rowsOf(
      pool,
      'CREATE TRIGGER gate_payout_updates BEFORE UPDATE ON nestjs_payouts.payouts ' +
        'FOR EACH STATEMENT EXECUTE FUNCTION public.gate_payout_updates()',
    );
    const gatekeeper = await pool.connect();
    try {
      await gatekeeper.query('SELECT pg_advisory_lock(4242)');
      const again = ledger.begin(id!, 'changed-between', t2, false);
      await waitingFor('advisory', 'the second attempt held at the gate');
      // The first attempt's outcome, asking for a retry, committed while the second attempt's UPDATE waits.
      await gatekeeper.query('BEGIN');
      await gatekeeper.query(`SELECT set_config('gate.passed', 'yes', true)`);
      const { rows } = await gatekeeper.query(
        `SELECT nestjs_payouts.payout_settle('default', $1, $2, 'retrying', '{}') AS verdict`,
        [id, t1],
      );
      expect(rows).toEqual([{ verdict: 'settled' }]);
      await gatekeeper.query('COMMIT');
      await gatekeeper.query('SELECT pg_advisory_unlock(4242)');

      // Its UPDATE matched nothing, its read found the payout retrying: it writes its mark then, and sends.
      expect(await again).toEqual({ step: 'send', attempt: 2, resolution: undefined });
      expect(await ledger.read(id!)).toMatchObject({ state: 'sending', attempt: 2 });
      expect(await ledger.settle(id!, 'changed-between', t2, 'sent', {})).toBe('completed');
    } finally {
      gatekeeper.release();
      await rowsOf(pool, 'DROP TRIGGER IF EXISTS gate_payout_updates ON nestjs_payouts.payouts');
      await rowsOf(pool, 'DROP FUNCTION IF EXISTS public.gate_payout_updates()');
    }
  });

  it('rejects within timeoutMs while PostgreSQL does not answer, saying whether the mark may be written, and leaks no connection', async () => {
    const [queried, connecting] = await claimRun('not-answering', 2);
    // A ledger of its own, with a short timeoutMs, on a pool whose backends the test can tell apart.
    const hungPool = new pg.Pool({ ...pool.options, max: 2, application_name: 'hung' });
    hungPool.on('error', () => undefined);
    const hung = payoutLedgerPostgres({ pool: hungPool, timeoutMs: 500 }).create({ account: 'default' });
    const paused: number[] = [];
    try {
      await hung.open?.();
      // One idle connection in the pool: the first call below is sent on it, and the second has to connect.
      expect(await hung.read(queried!)).toMatchObject({ state: 'queued' });
      const backends = await rowsOf(pool, `SELECT pid FROM pg_stat_activity WHERE application_name = 'hung'`);
      expect(backends).toHaveLength(1);
      for (const pid of [server.pid!, Number(backends[0]!.pid)]) {
        process.kill(pid, 'SIGSTOP');
        paused.push(pid);
      }

      const onIdleConnection = await hung.begin(queried!, 'not-answering', randomUUID(), false).catch((e) => e);
      const whileConnecting = await hung.begin(connecting!, 'not-answering', randomUUID(), false).catch((e) => e);
      for (const pid of paused.splice(0)) process.kill(pid, 'SIGCONT');

      // Sent and unanswered: it may have been written. Never connected: nothing was.
      expect(onIdleConnection).toBeInstanceOf(PayoutLedgerUnavailableError);
      expect(onIdleConnection).toMatchObject({ reason: 'timeout', written: 'unknown', retrySafe: true });
      expect(onIdleConnection.message).toBe(
        'The payout ledger could not mark a payout as sending: no reply within timeoutMs (500 ms); ' +
          'it may or may not have been written.',
      );
      expect(whileConnecting).toBeInstanceOf(PayoutLedgerUnavailableError);
      expect(whileConnecting).toMatchObject({ reason: 'timeout', written: 'none', retrySafe: true });
      // The connection that arrives late goes back to the pool; the one left without a reply was closed.
      await eventually(
        async () => (hungPool.totalCount === 1 && hungPool.idleCount === 1 ? true : undefined),
        30_000,
        'the late connection back in the pool',
      );
      // The payout never reached stays queued and is sent. The statement left unanswered reached its backend, which
      // ran it once it could: the mark is there, and the next attempt finds it (to park the payout), never sends.
      expect(await hung.begin(connecting!, 'not-answering', randomUUID(), false)).toMatchObject({
        step: 'send',
        attempt: 1,
      });
      await eventually(
        async () => ((await ledger.read(queried!))?.state === 'sending' ? true : undefined),
        30_000,
        'the unanswered statement run',
      );
      expect(await hung.begin(queried!, 'not-answering', randomUUID(), false)).toEqual({ step: 'interrupted' });
    } finally {
      for (const pid of paused) process.kill(pid, 'SIGCONT');
      await hung.close?.();
      await hungPool.end();
    }
  });

  it('completes a run of 300 exactly once when all its outcomes are recorded at once, 20 connections side by side', async () => {
    const ids = await claimRun('side-by-side', 300);
    const tokens = ids.map(() => randomUUID());
    const begun = await Promise.all(ids.map((id, i) => ledger.begin(id, 'side-by-side', tokens[i]!, false)));
    expect(begun.every((step) => step.step === 'send')).toBe(true);

    const verdicts = await Promise.all(
      ids.map((id, i) => ledger.settle(id, 'side-by-side', tokens[i]!, i % 3 === 0 ? 'refused' : 'sent', {})),
    );

    expect(verdicts.filter((verdict) => verdict === 'completed')).toHaveLength(1);
    expect(verdicts.filter((verdict) => verdict === 'settled')).toHaveLength(299);
    const completer = ids[verdicts.indexOf('completed')];
    expect(await completers('side-by-side')).toEqual([completer]);
    expect(await completedAt('side-by-side')).toBeInstanceOf(Date);
    expect((await ledger.counts('side-by-side'))?.counts).toMatchObject({ sent: 200, refused: 100, total: 300 });
  });

  it('completes the run after an outcome still being committed when the last payout was sent, recorded while it waited', async () => {
    const [first, last] = await claimRun('still-committing', 2);
    const [t1, t2] = [randomUUID(), randomUUID()];
    await ledger.begin(first!, 'still-committing', t1, false);
    // The first outcome is recorded in a transaction left open: it saw the other payout waiting to be sent, so it
    // leaves the question of the run to that payout's outcome.
    const slow = await pool.connect();
    try {
      await slow.query('BEGIN');
      const { rows } = await slow.query(`SELECT nestjs_payouts.payout_settle('default', $1, $2, 'sent', '{}') AS v`, [
        first,
        t1,
      ]);
      expect(rows[0].v).toBe('settled');

      await ledger.begin(last!, 'still-committing', t2, false);
      // The last one finds nothing waiting to be sent and asks whether the run is complete: the question waits for
      // the first outcome's commit rather than reading it as still sending.
      const settling = ledger.settle(last!, 'still-committing', t2, 'sent', {});
      await waitingFor('advisory', 'the completion waiting for the open outcome');
      expect(await completedAt('still-committing')).toBeNull();
      await slow.query('COMMIT');

      expect(await settling).toBe('completed');
      expect(await completers('still-committing')).toEqual([last]);
    } finally {
      slow.release();
    }
  });

  it('does not complete a run while one of its payouts is retrying, and completes it with that payout', async () => {
    const [first, second] = await claimRun('with-a-retry', 2);
    const [t1, t2, t3] = [randomUUID(), randomUUID(), randomUUID()];
    await ledger.begin(first!, 'with-a-retry', t1, false);
    await ledger.begin(second!, 'with-a-retry', t2, false);

    expect(await ledger.settle(first!, 'with-a-retry', t1, 'sent', {})).toBe('settled');
    expect(await ledger.settle(second!, 'with-a-retry', t2, 'retrying', {})).toBe('settled');
    expect(await completedAt('with-a-retry')).toBeNull();

    expect(await ledger.begin(second!, 'with-a-retry', t3, false)).toMatchObject({ step: 'send', attempt: 2 });
    expect(await ledger.settle(second!, 'with-a-retry', t3, 'sent', {})).toBe('completed');
    expect(await completers('with-a-retry')).toEqual([second]);
  });

  it('answers an outcome recorded again by the same attempt as recorded (its reply was lost), and another attempt as lost', async () => {
    const [id] = await claimRun('recorded-again', 1);
    const token = randomUUID();
    await ledger.begin(id!, 'recorded-again', token, false);

    expect(await ledger.settle(id!, 'recorded-again', token, 'sent', { reply: { status: 201 } })).toBe('completed');
    // The same call again: the outcome is there, written by this attempt, and the run is complete already.
    expect(await ledger.settle(id!, 'recorded-again', token, 'sent', { reply: { status: 201 } })).toBe('settled');
    // Another attempt's outcome, or another outcome, is not this one.
    expect(await ledger.settle(id!, 'recorded-again', randomUUID(), 'sent', {})).toBe('lost');
    expect(await ledger.settle(id!, 'recorded-again', token, 'unknown', {})).toBe('lost');
    expect(await completers('recorded-again')).toEqual([id]);
    expect((await ledger.read(id!))?.outcome).toBe('{"reply": {"status": 201}}');
  });

  it('completes the run when the job runs again after its worker stopped between the outcome and the completion', async () => {
    const [first, last] = await claimRun('stopped-between', 2);
    const [t1, t2] = [randomUUID(), randomUUID()];
    await ledger.begin(first!, 'stopped-between', t1, false);
    await ledger.begin(last!, 'stopped-between', t2, false);
    expect(await ledger.settle(first!, 'stopped-between', t1, 'sent', {})).toBe('settled');
    // The last outcome committed by the ledger's own statement, and then nothing: the worker stopped there.
    await rowsOf(pool, `SELECT nestjs_payouts.payout_settle('default', $1, $2, 'sent', '{}')`, [last, t2]);
    expect(await completedAt('stopped-between')).toBeNull();

    // BullMQ runs the job again: it finds the outcome, and the run is completed then, by that payout.
    expect(await ledger.begin(last!, 'stopped-between', randomUUID(), false)).toEqual({ step: 'settled' });
    expect(await completedAt('stopped-between')).toBeInstanceOf(Date);
    expect(await ledger.read(last!)).toMatchObject({ state: 'sent', completesRun: true });
    // And only once: the next time it is found settled, nothing changes.
    expect(await ledger.begin(last!, 'stopped-between', randomUUID(), false)).toEqual({ step: 'settled' });
    expect(await completers('stopped-between')).toEqual([last]);
  });

  it('prepares the statements of each payout once per connection, or has them parsed at every call with preparedStatements: false', async () => {
    for (const preparedStatements of [true, false]) {
      // One connection, so that what it prepared can be read on it.
      const single = new pg.Pool({ connectionString: url, max: 1 });
      const own = payoutLedgerPostgres({ pool: single, preparedStatements }).create({ account: 'default' });
      try {
        await own.open?.();
        const runId = `prepared-${preparedStatements}`;
        const ids = await claimRun(runId, 3);
        const verdicts = [];
        for (const id of ids) {
          const token = randomUUID();
          expect(await own.begin(id, runId, token, false)).toMatchObject({ step: 'send', attempt: 1 });
          verdicts.push(await own.settle(id, runId, token, 'sent', { reply: { status: 201 } }));
        }
        expect(verdicts).toEqual(['settled', 'settled', 'completed']);

        const prepared = await rowsOf(single, 'SELECT name, statement FROM pg_prepared_statements ORDER BY name');
        if (!preparedStatements) {
          expect(prepared).toEqual([]);
          continue;
        }
        expect(prepared.map((row) => String(row.name).replace(/[0-9a-f]{16}$/, '…'))).toEqual([
          'nestjs_payouts_begin_…',
          'nestjs_payouts_complete_…',
          'nestjs_payouts_settle_…',
        ]);
        expect(prepared.map((row) => String(row.statement).match(/payout_[a-z_]+/)?.[0])).toEqual([
          'payout_begin',
          'payout_run_complete',
          'payout_settle',
        ]);
      } finally {
        await own.close?.();
        await single.end();
      }
    }
  });
});
