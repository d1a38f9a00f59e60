import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { NOOP_INSTRUMENTATION } from '../common/noop-instrumentation.js';
import { type LogTarget, PackageLogger } from '../common/package-logger.js';
import { escapeControls, printable } from '../common/printable.js';
import { throttledErrorLog } from '../common/throttled-error-log.js';
import { closeBullmq } from '../common/close-bullmq.js';
import {
  type CreatePayoutRequest,
  type PayoutLedger,
  type PayoutLedgerRecord,
  PayoutLedgerUnavailableError,
  type PayoutRunDecisionRecorded,
  PayoutRunResolveError,
  PayoutsCallOptionsError,
  type PayoutsInstrumentation,
} from '../index.js';
import { bullmq } from './bullmq-runtime.js';
import { type PayoutJobData, payoutJobId, payoutJobSpec } from './payout-job.js';
import { type PayoutEnqueueOptions, type PayoutEnqueueResult, PayoutRunEnqueuer } from './payout-run-enqueuer.js';
import type { PayoutResolution, PayoutRunCounts, PayoutRunError } from './payout-run-results.js';
import type { PayoutRunsConfig } from './payout-runs-options.js';
import { payoutRunsQueueName } from './payout-runs-queue-name.js';
import { PayoutStateStore } from './payout-state-store.js';
import { RedisReplyTimeout, redisReply } from './redis-reply.js';

export interface PayoutRunProgress {
  readonly runId: string;
  readonly counts: PayoutRunCounts;
  /** When the run first had nothing queued, sending or retrying. */
  readonly completedAt: Date | undefined;
}

/** A payout parked because its outcome is unknown. */
export interface UnknownPayout {
  readonly requestId: string;
  readonly runId: string;
  /** Requests sent for it, those answered `429` or `503` included. */
  readonly requestsSent: number;
  /** @deprecated The same number as `requestsSent`, whose name says what it counts. */
  readonly attempt: number;
  /** Since when it is parked. */
  readonly since: Date;
  readonly error: PayoutRunError | undefined;
}

/** What `resolveUnknown()` did: resolved, no such payout, not unknown (any more), or its handlers still running. */
export type PayoutResolveOutcome = 'resolved' | 'not-found' | 'not-unknown' | 'busy';

/** How long closing the producer waits for Redis, which may be away. */
const QUEUE_CLOSE_TIMEOUT_MS = 5000;

/**
 * The payout runs of one account: enqueue thousands of payouts at once, each sent at most once by the workers, follow a
 * run's progress, and decide on the payouts whose outcome is unknown. Inject it with `@InjectPayoutRuns()`.
 */
export class PayoutRunsService implements OnModuleInit, OnApplicationShutdown {
  /** The account's BullMQ queue, also what `getPayoutRunsQueueToken()` injects (Bull Board, metrics). */
  readonly queue: Queue;
  /** @internal The record of every payout: the `ledger` option's, else Redis beside the queue. */
  readonly store: PayoutLedger;
  /** @internal What payout runs keep in Redis beside the queue, whatever the ledger: the pauses of the queue. */
  readonly redisState: PayoutStateStore;
  /** @internal The account's instrumentation (its `PayoutsModule` registration's), set once the app is initialised. */
  instrumentation: PayoutsInstrumentation = NOOP_INSTRUMENTATION;

  private readonly logger: PackageLogger;
  private readonly enqueuer: PayoutRunEnqueuer;

  constructor(
    private readonly config: PayoutRunsConfig,
    readonly account: string,
    logTo: LogTarget | string = 'PayoutRuns',
  ) {
    this.logger = new PackageLogger(logTo);
    this.queue = new bullmq.Queue(payoutRunsQueueName(account), {
      connection: config.connection,
      prefix: config.prefix,
    });
    this.queue.on('error', throttledErrorLog(this.logger, `Queue ${this.queue.name}`));
    this.redisState = new PayoutStateStore(this.queue, config.dedupeWindowMs);
    this.store = config.ledger ? config.ledger.create({ account }) : this.redisState;
    this.enqueuer = new PayoutRunEnqueuer(this.queue, this.store, config, () => this.enqueueTrace());
  }

  /** The ledger checks its schema (or migrates it) before anything is enqueued or sent. */
  async onModuleInit(): Promise<void> {
    try {
      await this.store.open?.();
    } catch (error) {
      // Nest calls no shutdown hook after a failed bootstrap: the queue's connection would keep the process alive.
      await closeBullmq(this.queue);
      throw error;
    }
  }

  /**
   * Validates every item with `createPayout()`'s rules, then queues each valid one under its `request_id` (one job per
   * `request_id` per account, within the dedupe window), and resolves with what became of each. An invalid item, or
   * one whose `request_id` is used for another body, is refused alone. Rejects with `PayoutRunEnqueueError` when Redis
   * fails or gives no reply within `enqueueTimeoutMs` (saying what is known of each item), or for a malformed call
   * (`PayoutsCallOptionsError`); enqueueing the same items again is then safe.
   */
  enqueue(items: readonly CreatePayoutRequest[], options: PayoutEnqueueOptions = {}): Promise<PayoutEnqueueResult> {
    return this.enqueuer.enqueue(items, options);
  }

  /** The counts of a run per state; `undefined` for a run id never enqueued (or past the dedupe window). */
  async progress(runId: string): Promise<PayoutRunProgress | undefined> {
    const progress = await this.ledgerRead(this.store.counts(runId), "read the run's counts");
    if (!progress) return undefined;
    return {
      runId,
      counts: progress.counts,
      completedAt: progress.completedAt === undefined ? undefined : new Date(progress.completedAt),
    };
  }

  /** The payouts parked as unknown, oldest first, `limit` at most from `offset`, and how many there are in all. */
  async listUnknown({ offset = 0, limit = 100 }: { offset?: number; limit?: number } = {}): Promise<{
    total: number;
    payouts: UnknownPayout[];
  }> {
    const { total, requestIds } = await this.ledgerRead(this.store.unknown(offset, limit), 'list the unknown payouts');
    const records = await Promise.all(
      requestIds.map((requestId) => this.ledgerRead(this.store.read(requestId), 'read an unknown payout')),
    );
    const payouts = records
      .filter((record) => record !== undefined && record.state === 'unknown')
      .map((record) => {
        const stored = record!.outcome === undefined ? {} : (JSON.parse(record!.outcome) as { error?: PayoutRunError });
        return {
          requestId: record!.requestId,
          runId: record!.runId,
          requestsSent: record!.attempt,
          attempt: record!.attempt,
          since: new Date(record!.since),
          error: stored.error,
        };
      });
    return { total, payouts };
  }

  /**
   * A person's decision on a payout whose outcome is unknown, after checking with the provider: `'sent'` (it exists:
   * the sent handlers run) or `'absent'` (it does not: it is sent once more, under the same `request_id`). Logged with
   * `by` and `note`, and kept on the payout. Rejects with `PayoutRunResolveError`, saying whether the decision is
   * recorded, when Redis gives no reply within `enqueueTimeoutMs`, or when Redis or the ledger fails once the decision
   * may be recorded: the same call again finishes it.
   */
  async resolveUnknown(
    requestId: string,
    decision: 'sent' | 'absent',
    { by, note }: { by?: string; note?: string } = {},
  ): Promise<PayoutResolveOutcome> {
    if (decision !== 'sent' && decision !== 'absent') {
      throw new PayoutsCallOptionsError('decision', '"sent" or "absent"');
    }
    if (typeof requestId !== 'string') return 'not-found';
    const reached: { recorded: PayoutRunDecisionRecorded } = { recorded: 'no' };
    try {
      return await this.decide(requestId, decision, { by, note }, reached);
    } catch (error) {
      // A ledger that answered that it wrote nothing: the decision is not recorded.
      const wroteNothing = error instanceof PayoutLedgerUnavailableError && error.written === 'none';
      const recorded = reached.recorded === 'maybe' && wroteNothing ? 'no' : reached.recorded;
      // Before the decision, Redis's or the ledger's own error says all there is: nothing changed.
      if (recorded === 'no' && !(error instanceof RedisReplyTimeout)) throw error;
      throw new PayoutRunResolveError(requestId, decision, recorded, failureOf(error), { cause: error });
    }
  }

  /** `resolveUnknown()`'s steps, each bounded; `reached` says how far the decision got, should one fail. */
  private async decide(
    requestId: string,
    decision: 'sent' | 'absent',
    { by, note }: { by?: string; note?: string },
    reached: { recorded: PayoutRunDecisionRecorded },
  ): Promise<PayoutResolveOutcome> {
    const record = await this.ledgerStep(this.store.read(requestId));
    if (!record) return 'not-found';
    const job = await this.redisStep(this.queue.getJob(payoutJobId(requestId)));
    // A durable ledger keeps the request: its job, lost with Redis's data, is made again.
    if (!job && !record.request) return record.state === 'unknown' ? 'not-found' : 'not-unknown';
    const jobState = job ? await this.redisStep(job.getState()) : 'missing';
    const ended = jobState === 'completed' || jobState === 'failed' || jobState === 'missing';
    if (record.state !== 'unknown') {
      const earlier = ended ? decisionAwaitingItsJob(record, decision, job, jobState) : undefined;
      if (!earlier) return 'not-unknown';
      reached.recorded = 'yes';
      // Finished meanwhile by another call (the same decision made twice at once, or two workers' job checks).
      if (!(await this.queueAgain(record, job, jobState))) return 'not-unknown';
      this.resolved(record, earlier);
      return 'resolved';
    }
    if (!ended) return 'busy';
    const resolution: PayoutResolution = {
      decision,
      ...(typeof by === 'string' && { by }),
      ...(typeof note === 'string' && { note }),
      at: new Date().toISOString(),
    };
    reached.recorded = 'maybe';
    const resolved = await this.ledgerStep(this.store.resolve(requestId, record.runId, decision, resolution));
    if (resolved !== 'resolved') return resolved === 'missing' ? 'not-found' : 'not-unknown';
    reached.recorded = 'yes';
    // Queued meanwhile by a call that found this decision recorded (the same one made at once), which logged it.
    if (!(await this.queueAgain(record, job, jobState))) return 'not-unknown';
    this.resolved(record, resolution);
    return 'resolved';
  }

  /**
   * Queues the job of a payout just decided: retried from where it ended, or made again from a durable ledger. `false`
   * when another call queued it first: BullMQ refuses to retry a job that no longer ended, and the job read again has
   * lost the end time it had (or ended since with another).
   */
  private async queueAgain(record: PayoutLedgerRecord, job: Job | undefined, jobState: string): Promise<boolean> {
    if (!job) {
      const request = record.request as unknown as CreatePayoutRequest;
      await this.redisStep(this.addJobs([{ request, runId: record.runId }]));
      return true;
    }
    try {
      await this.redisStep(
        job.retry(jobState as 'completed' | 'failed', { resetAttemptsMade: true, resetAttemptsStarted: true }),
      );
      return true;
    } catch (error) {
      // Without a reply, whether this call's own retry happened is unknown.
      if (error instanceof RedisReplyTimeout) throw error;
      // A read that fails says nothing more: the refusal is what the caller learns.
      const now = await this.redisStep(this.queue.getJob(job.id!)).catch(() => undefined);
      if (now && now.finishedOn !== job.finishedOn) return false;
      throw error;
    }
  }

  /** One reply of Redis to a call of the service, within `enqueueTimeoutMs`. */
  private redisStep<T>(pending: Promise<T>): Promise<T> {
    return redisReply(pending, this.config.enqueueTimeoutMs);
  }

  /** One reply of the ledger: Redis's within `enqueueTimeoutMs`; a durable ledger bounds its own. */
  private ledgerStep<T>(pending: Promise<T>): Promise<T> {
    return this.store.durable ? pending : this.redisStep(pending);
  }

  /**
   * A read of the ledger for `progress()` or `listUnknown()`: Redis's missing reply is said as a durable ledger's is,
   * with `PayoutLedgerUnavailableError`; an error of Redis's own is left as it is.
   */
  private async ledgerRead<T>(pending: Promise<T>, operation: string): Promise<T> {
    try {
      return await this.ledgerStep(pending);
    } catch (error) {
      if (!(error instanceof RedisReplyTimeout)) throw error;
      throw new PayoutLedgerUnavailableError(operation, 'timeout', 'none', error.message, { cause: error });
    }
  }

  /** Counts and logs a decision whose job is queued again. */
  private resolved(record: PayoutLedgerRecord, { decision, by, note }: PayoutResolution): void {
    this.instrumentation.payoutRunResolved?.(decision);
    this.logger.log(
      `Payout ${printable(record.requestId)} of run ${printable(record.runId)} resolved as ${decision}` +
        `${by === undefined ? '' : ` by ${printable(by)}`}${note === undefined ? '' : `: ${printable(note)}`}` +
        (decision === 'absent' ? '; it is sent once more under the same request_id' : '; the sent handlers run'),
    );
  }

  /** Stored only when something records traces, so that the worker's span joins the trace of the enqueue. */
  private enqueueTrace(): PayoutJobData['trace'] {
    const carrier = this.instrumentation.payoutRunCarrier?.();
    return carrier && Object.keys(carrier).length > 0 ? carrier : undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await closeBullmq(this.queue, { timeoutMs: QUEUE_CLOSE_TIMEOUT_MS });
    await this.store.close?.();
  }

  /** @internal Adds the job of a payout that the ledger holds and Redis lost (a no-op when the job is there). */
  async addJobs(
    payouts: readonly { request: CreatePayoutRequest; runId: string; trace?: PayoutJobData['trace'] }[],
  ): Promise<void> {
    await this.queue.addBulk(
      payouts.map(({ request, runId, trace }) => payoutJobSpec(request, runId, trace, this.config)),
    );
  }
}

/**
 * The decision an earlier `resolveUnknown()` recorded without queueing the job again (Redis failed in between), when it
 * is `decision` and the job, ended, has not run since: after `absent` the payout stays queued until a job begins to
 * send it; after `sent`, a job that runs ends `sent`, so the job still ends as the unknown outcome left it (completed
 * with `'unknown'`, or failed: its handlers then run again), or is missing, to be made again from a durable ledger.
 */
function decisionAwaitingItsJob(
  record: PayoutLedgerRecord,
  decision: 'sent' | 'absent',
  job: Job | undefined,
  jobState: string,
): PayoutResolution | undefined {
  if (record.resolution === undefined) return undefined;
  const resolution = JSON.parse(record.resolution) as PayoutResolution;
  if (resolution.decision !== decision) return undefined;
  if (decision === 'absent') return record.state === 'queued' ? resolution : undefined;
  const ranSince = jobState === 'completed' && job!.returnvalue !== 'unknown';
  return record.state === 'sent' && !ranSince ? resolution : undefined;
}

/** What failed, for an error's message: the time limit, the ledger's own words, or Redis's reply (escaped, bounded). */
function failureOf(error: unknown): string {
  if (error instanceof RedisReplyTimeout) return error.message;
  if (error instanceof PayoutLedgerUnavailableError) return error.message.replace(/\.$/, '');
  const detail = `Redis or BullMQ reported an error: ${error instanceof Error ? error.message : String(error)}`;
  return escapeControls(detail, 300);
}
