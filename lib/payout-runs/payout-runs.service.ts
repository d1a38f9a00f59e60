import { randomUUID } from 'node:crypto';
import { Logger, type LoggerService, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { NOOP_INSTRUMENTATION } from '../common/noop-instrumentation.js';
import { printable } from '../common/printable.js';
import { throttledErrorLog } from '../common/throttled-error-log.js';
import { withDeadline } from '../common/with-deadline.js';
import {
  type CreatePayoutRequest,
  type PayoutLedgerTransaction,
  type PayoutLedger,
  PayoutLedgerUnavailableError,
  PayoutRequestConflictError,
  PayoutsCallOptionsError,
  type PayoutsInstrumentation,
  PayoutValidationError,
} from '../index.js';
import { validatePayoutRequest } from '../payouts/payout-request-validator.js';
import { bullmq } from './bullmq-runtime.js';
import { type PayoutJobData, payoutFingerprint, payoutJobId } from './payout-job.js';
import type { PayoutResolution, PayoutRunCounts, PayoutRunError } from './payout-run-results.js';
import type { PayoutRunsConfig } from './payout-runs-options.js';
import { payoutRunsQueueName } from './payout-runs-queue-name.js';
import { PayoutStateStore } from './payout-state-store.js';

/** What became of one item of `enqueue()`, at its index in the array given. */
export type PayoutEnqueueItem =
  | { readonly index: number; readonly requestId: string; readonly status: 'queued'; readonly runId: string }
  /**
   * Written in the transaction given as `db`, to be queued once it commits (and never if it rolls back): with `db`
   * only, in place of `queued`.
   */
  | { readonly index: number; readonly requestId: string; readonly status: 'pending'; readonly runId: string }
  /** The same body was queued before under this `request_id` (within the dedupe window): nothing added. */
  | { readonly index: number; readonly requestId: string; readonly status: 'already-queued'; readonly runId: string }
  /** Nothing queued: the request is invalid, or its `request_id` is used for a different body. */
  | {
      readonly index: number;
      readonly requestId: string | undefined;
      readonly status: 'refused';
      readonly error: PayoutValidationError | PayoutRequestConflictError;
    };

export interface PayoutEnqueueResult {
  readonly runId: string;
  readonly items: readonly PayoutEnqueueItem[];
  readonly queued: number;
  /** Written in the transaction given as `db` (with `db` only): queued once it commits. */
  readonly pending: number;
  readonly alreadyQueued: number;
  readonly refused: number;
}

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
  /** Requests sent for it. */
  readonly attempt: number;
  /** Since when it is parked. */
  readonly since: Date;
  readonly error: PayoutRunError | undefined;
}

/** What `resolveUnknown()` did: resolved, no such payout, not unknown (any more), or its handlers still running. */
export type PayoutResolveOutcome = 'resolved' | 'not-found' | 'not-unknown' | 'busy';

/** The options of `enqueue()`. */
export interface PayoutEnqueueOptions {
  /** The run's id: up to 100 letters, digits, `-`, `_` or `.`. Default: a random UUID. */
  runId?: string;
  /**
   * Your open database transaction (a `pg` client after `BEGIN`, a TypeORM `QueryRunner`, or an adapter: see
   * docs/payout-ledger.md), with the ledger in that database: the payouts are written there as pending, and queued
   * once it commits; rolled back, they never existed. Without it, they are queued at once.
   */
  db?: PayoutLedgerTransaction;
}

/** Items validated, claimed and added at once while enqueueing. */
const CHUNK = 500;
/** How long closing the producer waits for Redis, which may be away. */
const QUEUE_CLOSE_TIMEOUT_MS = 5000;
const RUN_ID = /^[\w.-]{1,100}$/;

/**
 * The payout runs of one account: enqueue thousands of payouts at once, each sent at most once by the workers, follow a
 * run's progress, and decide on the payouts whose outcome is unknown. Inject it with `@InjectPayoutRuns()`.
 */
export class PayoutRunsService implements OnModuleInit, OnApplicationShutdown {
  /** The account's BullMQ queue, also what `getPayoutRunsQueueToken()` injects (Bull Board, metrics). */
  readonly queue: Queue;
  /** @internal The record of every payout: the `ledger` option's, else Redis beside the queue. */
  readonly store: PayoutLedger;
  /** @internal The account's instrumentation (its `PayoutsModule` registration's), set once the app is initialised. */
  instrumentation: PayoutsInstrumentation = NOOP_INSTRUMENTATION;

  constructor(
    private readonly config: PayoutRunsConfig,
    readonly account: string,
    private readonly logger: LoggerService = new Logger('PayoutRuns'),
  ) {
    this.queue = new bullmq.Queue(payoutRunsQueueName(account), {
      connection: config.connection,
      prefix: config.prefix,
    });
    this.queue.on('error', throttledErrorLog(this.logger, `Queue ${this.queue.name}`));
    this.store = config.ledger
      ? config.ledger.create({ account })
      : new PayoutStateStore(this.queue, config.dedupeWindowMs);
  }

  /** The ledger checks its schema (or migrates it) before anything is enqueued or sent. */
  async onModuleInit(): Promise<void> {
    try {
      await this.store.open?.();
    } catch (error) {
      // Nest calls no shutdown hook after a failed bootstrap: the queue's connection would keep the process alive.
      await withDeadline(this.queue.close(), 1000, () => new Error('timeout')).catch(() => this.queue.disconnect());
      throw error;
    }
  }

  /**
   * Validates every item with `createPayout()`'s rules, then queues each valid one under its `request_id` (one job per
   * `request_id` per account, within the dedupe window), and resolves with what became of each. An invalid item, or
   * one whose `request_id` is used for another body, is refused alone. Rejects only when Redis fails, or for a
   * malformed call (`PayoutsCallOptionsError`); enqueueing the same items again is then safe.
   */
  async enqueue(
    items: readonly CreatePayoutRequest[],
    options: PayoutEnqueueOptions = {},
  ): Promise<PayoutEnqueueResult> {
    if (!Array.isArray(items)) throw new PayoutsCallOptionsError('items', 'an array of payout requests');
    const runId = options?.runId ?? randomUUID();
    if (typeof runId !== 'string' || !RUN_ID.test(runId)) {
      throw new PayoutsCallOptionsError('runId', 'up to 100 letters, digits, "-", "_" or "."');
    }
    const db = options?.db;
    if (db !== undefined) this.checkTransaction(db);
    const results: PayoutEnqueueItem[] = Array.from({ length: items.length });
    for (let start = 0; start < items.length; start += CHUNK) {
      const chunk = items.slice(start, start + CHUNK);
      await Promise.all(
        chunk.map(async (request, offset) => {
          const index = start + offset;
          try {
            await validatePayoutRequest(request);
          } catch (error) {
            if (!(error instanceof PayoutValidationError)) throw error;
            const requestId = (request as { request_id?: unknown } | null)?.request_id;
            results[index] = {
              index,
              requestId: typeof requestId === 'string' ? requestId : undefined,
              status: 'refused',
              error,
            };
          }
        }),
      );
    }
    if (db !== undefined) return this.writePending(db, items, runId, results);
    // Every item claimed before any job is added, so that no payout completes the run before the rest is counted.
    const jobs: { name: string; data: PayoutJobData; opts: object }[] = [];
    // Stored only when something records traces, so that the worker's span joins the trace of this call.
    const carrier = this.instrumentation.payoutRunCarrier?.();
    const trace = carrier && Object.keys(carrier).length > 0 ? carrier : undefined;
    for (let start = 0; start < items.length; start += CHUNK) {
      const pending = items
        .slice(start, start + CHUNK)
        .map((request, offset) => ({ request, index: start + offset }))
        .filter(({ index }) => !results[index]);
      if (pending.length === 0) continue;
      const claims = await this.claim(
        runId,
        pending.map(({ request }) => ({
          requestId: request.request_id,
          fingerprint: payoutFingerprint(request),
          request: request as unknown as Readonly<Record<string, unknown>>,
        })),
        start > 0,
      );
      pending.forEach(({ request, index }, position) => {
        const claim = claims[position]!;
        const requestId = request.request_id;
        if (claim.verdict === 'conflict') {
          results[index] = { index, requestId, status: 'refused', error: new PayoutRequestConflictError(requestId) };
          return;
        }
        results[index] = {
          index,
          requestId,
          status: claim.verdict === 'queued' ? 'queued' : 'already-queued',
          runId: claim.runId,
        };
        // Added again while still queued: a crash between the claim and the add left no job (a second add of the id
        // changes nothing).
        if (claim.state === 'queued') jobs.push(this.job(request, claim.runId, trace));
      });
    }
    for (let start = 0; start < jobs.length; start += CHUNK) {
      await this.queue.addBulk(jobs.slice(start, start + CHUNK));
    }
    return enqueueResult(runId, results);
  }

  /** The counts of a run per state; `undefined` for a run id never enqueued (or past the dedupe window). */
  async progress(runId: string): Promise<PayoutRunProgress | undefined> {
    const progress = await this.store.counts(runId);
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
    const { total, requestIds } = await this.store.unknown(offset, limit);
    const records = await Promise.all(requestIds.map((requestId) => this.store.read(requestId)));
    const payouts = records
      .filter((record) => record !== undefined && record.state === 'unknown')
      .map((record) => {
        const stored = record!.outcome === undefined ? {} : (JSON.parse(record!.outcome) as { error?: PayoutRunError });
        return {
          requestId: record!.requestId,
          runId: record!.runId,
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
   * `by` and `note`, and kept on the payout.
   */
  async resolveUnknown(
    requestId: string,
    decision: 'sent' | 'absent',
    { by, note }: { by?: string; note?: string } = {},
  ): Promise<PayoutResolveOutcome> {
    if (decision !== 'sent' && decision !== 'absent') {
      throw new PayoutsCallOptionsError('decision', '"sent" or "absent"');
    }
    const record = typeof requestId === 'string' ? await this.store.read(requestId) : undefined;
    if (!record) return 'not-found';
    if (record.state !== 'unknown') return 'not-unknown';
    const job = await this.queue.getJob(payoutJobId(requestId));
    // A durable ledger keeps the request: its job, lost with Redis's data, is made again.
    if (!job && !record.request) return 'not-found';
    const jobState = job ? await job.getState() : 'missing';
    if (jobState !== 'completed' && jobState !== 'failed' && jobState !== 'missing') return 'busy';
    const resolution: PayoutResolution = {
      decision,
      ...(typeof by === 'string' && { by }),
      ...(typeof note === 'string' && { note }),
      at: new Date().toISOString(),
    };
    const resolved = await this.store.resolve(requestId, record.runId, decision, resolution);
    if (resolved !== 'resolved') return resolved === 'missing' ? 'not-found' : 'not-unknown';
    if (job)
      await job.retry(jobState as 'completed' | 'failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    else await this.addJobs([{ request: record.request as unknown as CreatePayoutRequest, runId: record.runId }]);
    this.instrumentation.payoutRunResolved?.(decision);
    this.logger.log(
      `Payout ${printable(requestId)} of run ${printable(record.runId)} resolved as ${decision}` +
        `${by === undefined ? '' : ` by ${printable(by)}`}${note === undefined ? '' : `: ${printable(note)}`}` +
        (decision === 'absent' ? '; it is sent once more under the same request_id' : '; the sent handlers run'),
    );
    return 'resolved';
  }

  /** `enqueue()` with `db`: the valid items written as pending in the caller's transaction, nothing queued. */
  private async writePending(
    db: PayoutLedgerTransaction,
    items: readonly CreatePayoutRequest[],
    runId: string,
    results: PayoutEnqueueItem[],
  ): Promise<PayoutEnqueueResult> {
    const carrier = this.instrumentation.payoutRunCarrier?.();
    const trace = carrier && Object.keys(carrier).length > 0 ? carrier : undefined;
    for (let start = 0; start < items.length; start += CHUNK) {
      const valid = items
        .slice(start, start + CHUNK)
        .map((request, offset) => ({ request, index: start + offset }))
        .filter(({ index }) => !results[index]);
      if (valid.length === 0) continue;
      const writes = await this.store.outbox!.writePending(
        db,
        runId,
        valid.map(({ request }) => ({
          requestId: request.request_id,
          fingerprint: payoutFingerprint(request),
          request: request as unknown as Readonly<Record<string, unknown>>,
        })),
        trace,
      );
      valid.forEach(({ request, index }, position) => {
        const { verdict, runId: ownRunId } = writes[position]!;
        const requestId = request.request_id;
        results[index] =
          verdict === 'conflict'
            ? { index, requestId, status: 'refused', error: new PayoutRequestConflictError(requestId) }
            : { index, requestId, status: verdict === 'pending' ? 'pending' : 'already-queued', runId: ownRunId };
      });
    }
    return enqueueResult(runId, results);
  }

  /** `db` must be a transaction, and the ledger one kept in that database. */
  private checkTransaction(db: PayoutLedgerTransaction): void {
    if (db === null || typeof db !== 'object' || typeof (db as Partial<PayoutLedgerTransaction>).query !== 'function') {
      throw new PayoutsCallOptionsError('db', 'your open transaction: an object with a query(text, values) method');
    }
    if (!this.store.outbox) {
      throw new PayoutsCallOptionsError(
        'db',
        'no db without a ledger kept in that database (the ledger option: payoutLedgerPostgres({ pool }) of ' +
          'nestjs-payouts/postgres)',
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await withDeadline(this.queue.close(), QUEUE_CLOSE_TIMEOUT_MS, () => new Error('timeout')).catch(() => undefined);
    await this.store.close?.();
  }

  /** @internal Adds the job of a payout that the ledger holds and Redis lost (a no-op when the job is there). */
  async addJobs(
    payouts: readonly { request: CreatePayoutRequest; runId: string; trace?: PayoutJobData['trace'] }[],
  ): Promise<void> {
    await this.queue.addBulk(payouts.map(({ request, runId, trace }) => this.job(request, runId, trace)));
  }

  /** Claims a chunk; a ledger that fails after earlier chunks were written says so. */
  private async claim(
    runId: string,
    items: Parameters<PayoutLedger['claim']>[1],
    earlierWritten: boolean,
  ): ReturnType<PayoutLedger['claim']> {
    try {
      return await this.store.claim(runId, items);
    } catch (error) {
      if (!earlierWritten || !(error instanceof PayoutLedgerUnavailableError) || error.written === 'unknown')
        throw error;
      throw new PayoutLedgerUnavailableError(error.operation, error.reason, 'some', error.detail);
    }
  }

  private job(
    request: CreatePayoutRequest,
    runId: string,
    trace: PayoutJobData['trace'],
  ): { name: string; data: PayoutJobData; opts: object } {
    const { attempts, backoffMs, dedupeWindowMs } = this.config;
    const age = Math.ceil(dedupeWindowMs / 1000);
    return {
      name: 'payout',
      data: trace === undefined ? { request, runId } : { request, runId, trace },
      opts: {
        jobId: payoutJobId(request.request_id),
        attempts,
        backoff: { type: 'exponential', delay: backoffMs },
        removeOnComplete: { age },
        removeOnFail: { age },
      },
    };
  }
}

function enqueueResult(runId: string, items: PayoutEnqueueItem[]): PayoutEnqueueResult {
  const count = (status: PayoutEnqueueItem['status']) => items.filter((item) => item.status === status).length;
  return {
    runId,
    items,
    queued: count('queued'),
    pending: count('pending'),
    alreadyQueued: count('already-queued'),
    refused: count('refused'),
  };
}
