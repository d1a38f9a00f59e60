import { randomUUID } from 'node:crypto';
import { type OnApplicationBootstrap, type OnModuleDestroy, type Type } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { endsWithin } from '../common/ends-within.js';
import { printable } from '../common/printable.js';
import { withDeadline } from '../common/with-deadline.js';
import { getPayoutsServiceToken, PayoutRunResolveError, type PayoutsService } from '../index.js';
import type { PayoutLookupAnswer, PayoutReconcileConfig } from './payout-reconcile-options.js';
import { payoutJobId, readPayoutJobData } from './payout-job.js';
import type { PayoutRunsConfig } from './payout-runs-options.js';
import type { PayoutResolveOutcome, PayoutRunsService } from './payout-runs.service.js';
import { PackageLogger } from '../common/package-logger.js';

/**
 * What the sweeps decided, since the instance started: what health checks report. The metrics count the lookups by
 * answer and the payouts given up on, through the instrumentation's `payoutRunLookedUp` and `payoutRunGivenUp`.
 */
export interface PayoutReconcileCounts {
  /** Found created: the sent handlers ran. */
  created: number;
  /** Found absent: sent once more under the same `request_id`. */
  absent: number;
  /** The provider did not know yet: left parked. */
  unknown: number;
  /** The lookup threw or did not answer in time: left parked. */
  failed: number;
  /** Still parked after `giveUpAfterMs`: counted by the one instance that gave up on it (once per payout). */
  givenUp: number;
}

/** Unknown outcomes read per page of a sweep. */
const PAGE = 100;

/**
 * Settles unknown outcomes by asking the provider (`reconcile.lookup`), on instances that run a worker: every
 * `sweepEveryMs`, the instance that takes the account's sweep lock looks up each payout parked for at least
 * `settleAfterMs`, oldest first, and resolves it as a person would with `resolveUnknown()`. The lookup runs beside the
 * queue, never in a worker's slot, and within `lookupTimeoutMs`.
 */
export class PayoutReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new PackageLogger('PayoutRuns');
  readonly counts: PayoutReconcileCounts = { created: 0, absent: 0, unknown: 0, failed: 0, givenUp: 0 };
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private stopped = false;
  /**
   * The decisions of this instance's sweeps that Redis or the ledger failed to finish, which may be recorded (the
   * payout then off the list of unknown outcomes, its job not queued again): made again at each sweep until finished.
   */
  private readonly unfinished = new Map<string, LookupDecision>();

  constructor(
    private readonly config: PayoutRunsConfig,
    private readonly runs: PayoutRunsService,
    private readonly moduleRef: ModuleRef,
  ) {}

  private get reconcile(): PayoutReconcileConfig | undefined {
    return this.config.reconcile;
  }

  onApplicationBootstrap(): void {
    const reconcile = this.reconcile;
    if (!reconcile || !this.config.worker) return;
    this.timer = setInterval(() => void this.sweep(), reconcile.sweepEveryMs);
  }

  /**
   * Stops sweeping, and waits for the sweep under way, up to `shutdownTimeoutMs`: one waiting on a Redis that does not
   * answer is left to stop with the process (it changed nothing it has not finished: a payout it had not resolved stays
   * parked), and another instance sweeps once its lock expires.
   */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    const { shutdownTimeoutMs } = this.config;
    if (await endsWithin(this.sweeping, shutdownTimeoutMs)) return;
    this.logger.warn(
      `The sweep of the unknown payouts of account '${this.runs.account}' did not end within shutdownTimeoutMs ` +
        `(${shutdownTimeoutMs} ms): it is left to stop with the process; another instance sweeps once its lock expires`,
    );
  }

  /** One sweep, unless one runs here already or another instance holds the lock; never rejects. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce()
      .catch((error: unknown) => {
        // A sweep left behind by the shutdown fails once the queue closes: the shutdown said so already.
        if (this.stopped) return;
        this.logger.error(`Sweep of the unknown payouts of account '${this.runs.account}' failed: ${messageOf(error)}`);
      })
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const reconcile = this.reconcile!;
    const { store } = this.runs;
    const token = randomUUID();
    // Long enough for one lookup and its resolution; renewed before each payout.
    const leaseMs = reconcile.lookupTimeoutMs + 30_000;
    if (!(await store.sweepLock('acquire', token, leaseMs))) return;
    try {
      await this.finishDecisions();
      const payouts = this.payouts();
      let offset = 0;
      for (;;) {
        const { requestIds } = await store.unknown(offset, PAGE);
        if (requestIds.length === 0) return;
        for (const requestId of requestIds) {
          if (this.stopped || !(await store.sweepLock('renew', token, leaseMs))) return;
          const outcome = await this.settle(requestId, reconcile, payouts);
          if (outcome === 'too-recent') return;
          // A resolved payout has left the list; anything else is still in it (an entry whose record expired too).
          if (outcome !== 'resolved') offset += 1;
        }
      }
    } finally {
      await store.sweepLock('release', token, leaseMs).catch(() => undefined);
    }
  }

  /** Looks one payout up and acts on the answer; `resolved` when it has left the list. */
  private async settle(
    requestId: string,
    reconcile: PayoutReconcileConfig,
    payouts: PayoutsService,
  ): Promise<'resolved' | 'parked' | 'too-recent' | 'gone'> {
    const { store, queue, account } = this.runs;
    const record = await store.read(requestId);
    if (!record || record.state !== 'unknown') return 'gone';
    const parkedFor = Date.now() - record.since;
    // The list is in the order the payouts were parked: the rest are more recent still.
    if (parkedFor < reconcile.settleAfterMs) return 'too-recent';
    const job = await queue.getJob(payoutJobId(requestId));
    const data = job && readPayoutJobData(job.data);
    if (!data) return 'parked';
    // Its job still runs (the handlers of its unknown outcome, on a slow machine): no decision could be recorded yet,
    // so it is not looked up now, but on a later sweep, once the job has ended.
    const jobState = await job.getState();
    if (jobState !== 'completed' && jobState !== 'failed') return 'parked';
    const what = `Payout ${printable(requestId)} of run ${printable(record.runId)}`;
    const answer = await this.lookUp(reconcile, data.request, {
      account,
      runId: record.runId,
      attempt: record.attempt,
      parkedSince: new Date(record.since),
      payouts,
    });
    this.runs.instrumentation.payoutRunLookedUp?.(typeof answer === 'string' ? answer : 'failed');
    if (answer === 'created' || answer === 'absent') {
      const outcome = await this.decide(requestId, answer, what);
      if (outcome === 'unfinished') return 'parked';
      if (outcome === 'resolved') {
        this.counts[answer] += 1;
        return 'resolved';
      }
      // Changed since it was read: a person's decision, or its job taken up again. The answer may be stale: not applied.
      if (outcome === 'busy') {
        this.logger.log(`${what}: the lookup answered ${answer}, but its job runs again; looked up on a later sweep`);
        return 'parked';
      }
      const state = outcome === 'not-found' ? 'no longer found' : 'no longer of unknown outcome (decided meanwhile)';
      this.logger.log(`${what}: the lookup answered ${answer}, but the payout is ${state}; left as it is`);
      return 'gone';
    }
    if (answer === 'unknown') {
      this.counts.unknown += 1;
      this.logger.log(`${what}: the lookup answered unknown; it stays parked`);
    } else {
      this.counts.failed += 1;
      this.logger.warn(`${what}: the lookup ${answer.failed}; it stays parked`);
    }
    // Recorded on the payout in Redis: one instance, whichever sweeps, logs and counts it, even after another stopped.
    if (parkedFor >= reconcile.giveUpAfterMs && (await store.recordGiveUp(requestId, record.since))) {
      this.counts.givenUp += 1;
      this.runs.instrumentation.payoutRunGivenUp?.();
      this.logger.error(
        `${what} is still parked as unknown after giveUpAfterMs (${reconcile.giveUpAfterMs} ms): ask the provider, then ` +
          `settle it with resolveUnknown() or the payout-runs resolve command`,
      );
    }
    return 'parked';
  }

  /**
   * Resolves the payout as the lookup answered. A decision that may be recorded without its job queued again is kept,
   * to be made again at the next sweeps, which finishes it; one surely not recorded fails the sweep, the payout still
   * parked for the next.
   */
  private async decide(
    requestId: string,
    answer: LookupDecision,
    what: string,
  ): Promise<PayoutResolveOutcome | 'unfinished'> {
    try {
      return await this.resolve(requestId, answer);
    } catch (error) {
      if (!(error instanceof PayoutRunResolveError) || error.recorded === 'no') throw error;
      this.unfinished.set(requestId, answer);
      this.logger.warn(`${what}: the lookup answered ${answer}. ${error.message} This instance makes it at each sweep`);
      return 'unfinished';
    }
  }

  /**
   * The decisions left unfinished by earlier sweeps, made again: each is kept until an answer comes. One that was not
   * recorded after all (the payout still parked) is dropped instead: the sweep looks the payout up again, rather than
   * applying an answer of an earlier sweep.
   */
  private async finishDecisions(): Promise<void> {
    for (const [requestId, answer] of this.unfinished) {
      const record = await this.runs.store.read(requestId);
      const outcome = record?.state === 'unknown' ? undefined : await this.resolve(requestId, answer);
      this.unfinished.delete(requestId);
      if (outcome === undefined) continue;
      if (outcome === 'resolved') this.counts[answer] += 1;
      else {
        this.logger.log(
          `Payout ${printable(requestId)}: the decision of an earlier sweep (the lookup answered ${answer}) is not ` +
            `made again (${outcome}); left as it is`,
        );
      }
    }
  }

  /** The decision the lookup's answer stands for: `created` resolves the payout as sent. */
  private resolve(requestId: string, answer: LookupDecision): Promise<PayoutResolveOutcome> {
    return this.runs.resolveUnknown(requestId, answer === 'created' ? 'sent' : 'absent', {
      by: 'reconcile',
      note: `the lookup answered ${answer}`,
    });
  }

  /** The answer within `lookupTimeoutMs`, or why there is none; a thrown error's message is never repeated. */
  private async lookUp(
    reconcile: PayoutReconcileConfig,
    request: Parameters<PayoutReconcileConfig['lookup']>[0],
    context: Omit<Parameters<PayoutReconcileConfig['lookup']>[1], 'signal'>,
  ): Promise<PayoutLookupAnswer | { failed: string }> {
    const abort = new AbortController();
    const { lookupTimeoutMs } = reconcile;
    try {
      const answer = await withDeadline(
        Promise.resolve().then(() => reconcile.lookup(request, { ...context, signal: abort.signal })),
        lookupTimeoutMs,
        () => new LookupTimeout(),
      );
      if (answer === 'created' || answer === 'absent' || answer === 'unknown') return answer;
      return { failed: "answered neither 'created', 'absent' nor 'unknown'" };
    } catch (error) {
      if (error instanceof LookupTimeout) {
        abort.abort();
        return { failed: `did not answer within lookupTimeoutMs (${lookupTimeoutMs} ms)` };
      }
      return { failed: `threw ${error instanceof Error ? printable(error.name) : typeof error}` };
    }
  }

  private payouts(): PayoutsService {
    const token = getPayoutsServiceToken(this.runs.account) as Type<PayoutsService> | string;
    return this.moduleRef.get(token, { strict: false });
  }
}

class LookupTimeout extends Error {}

/** A lookup's answer that decides the payout. */
type LookupDecision = Extract<PayoutLookupAnswer, 'created' | 'absent'>;

function messageOf(error: unknown): string {
  return error instanceof Error ? printable(error.message) : typeof error;
}
