import { randomUUID } from 'node:crypto';
import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { NOOP_INSTRUMENTATION } from '../common/noop-instrumentation.js';
import { type LogTarget, PackageLogger } from '../common/package-logger.js';
import { escapeControls, printable } from '../common/printable.js';
import { throttledErrorLog } from '../common/throttled-error-log.js';
import { closeBullmq } from '../common/close-bullmq.js';
import { eachInFlight } from '../common/each-in-flight.js';
import { withDeadline } from '../common/with-deadline.js';
import {
  type CreatePayoutRequest,
  type PayoutLedgerTransaction,
  type PayoutLedger,
  PayoutLedgerUnavailableError,
  PayoutRequestConflictError,
  PayoutRunEnqueueError,
  type PayoutRunEnqueueItemStatus,
  PayoutsCallOptionsError,
  type PayoutsInstrumentation,
  PayoutValidationError,
} from '../index.js';
import { isCertainlyValidPayoutRequest } from '../payouts/payout-request-fast-check.js';
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

/** One job as `addBulk()` takes it. */
interface PayoutJobSpec {
  readonly name: string;
  readonly data: PayoutJobData;
  readonly opts: object;
}

/** An item that passed validation, with its index in the array given to `enqueue()`. */
interface ValidItem {
  readonly request: CreatePayoutRequest;
  readonly index: number;
}

/** A valid item with its body's fingerprint. */
interface FingerprintedItem extends ValidItem {
  readonly fingerprint: string;
}

/** A job to add, with the index of its item in the array given to `enqueue()`. */
interface PayoutJobSpecAt {
  readonly index: number;
  readonly job: PayoutJobSpec;
}

/** The jobs of one claimed chunk: of the payouts it queued, and of those queued before, whose job may be missing. */
interface ClaimedJobs {
  readonly fresh: PayoutJobSpecAt[];
  readonly again: PayoutJobSpecAt[];
}

/** Redis gave no reply to one step of an enqueue in time. */
class RedisStepTimeout extends Error {
  constructor(ms: number) {
    super(`Redis gave no reply within enqueueTimeoutMs (${ms} ms)`);
  }
}

/** Items validated, claimed and added at once while enqueueing. */
const CHUNK = 500;
/** Adds of a chunk's jobs on their way at once: Redis runs one while the next is encoded and sent. */
const ADDS_IN_FLIGHT = 2;
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
  /** @internal What payout runs keep in Redis beside the queue, whatever the ledger: the pauses of the queue. */
  readonly redisState: PayoutStateStore;
  /** @internal The account's instrumentation (its `PayoutsModule` registration's), set once the app is initialised. */
  instrumentation: PayoutsInstrumentation = NOOP_INSTRUMENTATION;

  private readonly logger: PackageLogger;

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
    await this.refuseInvalid(items, results);
    const chunks = validChunks(items, results);
    if (db !== undefined) return this.writePending(db, chunks, runId, results);
    // What is known of each item so far, should Redis fail before the end.
    const known: PayoutRunEnqueueItemStatus[] = items.map(() => 'not-queued');
    try {
      await this.claimAndAdd(runId, chunks, results, known);
    } catch (error) {
      throw this.enqueueError(runId, items, results, known, error);
    }
    return enqueueResult(runId, results);
  }

  /**
   * Validates each item with `createPayout()`'s rules, refusing an invalid one in `results`. This runs on every item
   * before any `request_id` is claimed; what is left to refuse an item later (its fingerprint, see
   * `fingerprintChunk`) refuses it alone and never throws, so that one bad item never leaves the others claimed
   * without their jobs.
   */
  private async refuseInvalid(items: readonly CreatePayoutRequest[], results: PayoutEnqueueItem[]): Promise<void> {
    for (let index = 0; index < items.length; index++) {
      const request = items[index]!;
      // An ordinary valid request passes the quick check without a promise; anything else goes through the DTOs.
      if (isCertainlyValidPayoutRequest(request)) continue;
      try {
        await validatePayoutRequest(request);
      } catch (error) {
        if (!(error instanceof PayoutValidationError)) throw error;
        results[index] = refusal(index, request, error);
      }
    }
  }

  /**
   * The fingerprint of each item of a chunk, taken as the chunk is claimed or written rather than all at once before:
   * the next chunk's are taken while Redis runs this one's claim. An item that has none (nested too deep, or holding
   * what JSON cannot carry) is refused in `results` and left out.
   */
  private fingerprintChunk(chunk: readonly ValidItem[], results: PayoutEnqueueItem[]): FingerprintedItem[] {
    const fingerprinted: FingerprintedItem[] = [];
    for (const { request, index } of chunk) {
      try {
        fingerprinted.push({ request, index, fingerprint: payoutFingerprint(request) });
      } catch (error) {
        results[index] = refusal(index, request, error as PayoutValidationError);
      }
    }
    return fingerprinted;
  }

  /**
   * Claims the valid items chunk by chunk, one claim at a time and in order (a `request_id` given twice is claimed by
   * its first item), and adds each chunk's jobs once it is claimed, while the next one is claimed, in the order of the
   * items. No payout may complete the run before the rest is counted: one payout newly claimed for the run is always
   * held back, its job added only after the last claim, so that while a claim is left the run has a payout queued
   * without a job. The jobs of items queued before this call are added last too: theirs may be missing.
   */
  private async claimAndAdd(
    runId: string,
    chunks: readonly (readonly ValidItem[])[],
    results: PayoutEnqueueItem[],
    known: PayoutRunEnqueueItemStatus[],
  ): Promise<void> {
    // Stored only when something records traces, so that the worker's span joins the trace of this call.
    const carrier = this.instrumentation.payoutRunCarrier?.();
    const trace = carrier && Object.keys(carrier).length > 0 ? carrier : undefined;
    const last: PayoutJobSpecAt[] = [];
    let held: PayoutJobSpecAt | undefined;
    const claim = (chunk: readonly ValidItem[] | undefined) =>
      chunk === undefined ? undefined : awaitedLater(this.claimJobs(runId, chunk, results, known, trace));
    let claiming = claim(chunks[0]);
    // The adds on their way, oldest first, `ADDS_IN_FLIGHT` at most.
    const adding: Promise<void>[] = [];
    try {
      for (let at = 0; claiming !== undefined; at++) {
        const { fresh, again } = await claiming;
        claiming = claim(chunks[at + 1]);
        last.push(...again);
        const jobs = held === undefined ? fresh : [held, ...fresh];
        held = jobs.pop();
        if (jobs.length === 0) continue;
        if (adding.length === ADDS_IN_FLIGHT) await adding.shift();
        adding.push(awaitedLater(this.addJobsOf(jobs, known)));
      }
      await Promise.all(adding);
    } catch (error) {
      // Whatever is still on its way settles first, so that the error says what became of each of its items.
      await Promise.allSettled([claiming, ...adding]);
      throw error;
    }
    if (held !== undefined) last.push(held);
    await eachInFlight(chunksOf(last), ADDS_IN_FLIGHT, (jobs) => this.addJobsOf(jobs, known));
  }

  /**
   * Fingerprints and claims one chunk, recording what became of each item; returns the jobs to add, in the order of
   * the items: those of payouts it queued (`fresh`), and those of payouts already queued, whose job may be missing (an
   * earlier enqueue claimed them and Redis failed before the add): a second add of an id changes nothing.
   */
  private async claimJobs(
    runId: string,
    chunk: readonly ValidItem[],
    results: PayoutEnqueueItem[],
    known: PayoutRunEnqueueItemStatus[],
    trace: PayoutJobData['trace'],
  ): Promise<ClaimedJobs> {
    const claimed: ClaimedJobs = { fresh: [], again: [] };
    const pending = this.fingerprintChunk(chunk, results);
    if (pending.length === 0) return claimed;
    const claims = await this.claimChunk(
      runId,
      pending.map(({ request, fingerprint }) => ({
        requestId: request.request_id,
        fingerprint,
        request: request as unknown as Readonly<Record<string, unknown>>,
      })),
      pending.map(({ index }) => index),
      known,
    );
    pending.forEach(({ request, index }, position) => {
      const claim = claims[position]!;
      const requestId = request.request_id;
      if (claim.verdict === 'conflict') {
        results[index] = { index, requestId, status: 'refused', error: new PayoutRequestConflictError(requestId) };
        return;
      }
      const fresh = claim.verdict === 'queued';
      results[index] = { index, requestId, status: fresh ? 'queued' : 'already-queued', runId: claim.runId };
      // Past queued, a job took it up.
      if (claim.state !== 'queued') {
        known[index] = 'queued';
        return;
      }
      // A durable ledger's payout is queued by the job repair even if its add fails.
      known[index] = fresh && !this.store.durable ? 'not-queued' : 'maybe-queued';
      (fresh ? claimed.fresh : claimed.again).push({ index, job: this.job(request, claim.runId, trace) });
    });
    return claimed;
  }

  /** Adds the jobs of claimed payouts, saying of each item, should Redis fail, what is known. */
  private async addJobsOf(jobs: readonly PayoutJobSpecAt[], known: PayoutRunEnqueueItemStatus[]): Promise<void> {
    for (const { index } of jobs) known[index] = 'maybe-queued';
    await this.redisStep(this.queue.addBulk(jobs.map(({ job }) => job)));
    for (const { index } of jobs) known[index] = 'queued';
  }

  /** One reply of Redis while enqueueing, bounded by `enqueueTimeoutMs`. */
  private redisStep<T>(pending: Promise<T>): Promise<T> {
    const { enqueueTimeoutMs } = this.config;
    return withDeadline(pending, enqueueTimeoutMs, () => new RedisStepTimeout(enqueueTimeoutMs));
  }

  private enqueueError(
    runId: string,
    items: readonly CreatePayoutRequest[],
    results: readonly PayoutEnqueueItem[],
    known: readonly PayoutRunEnqueueItemStatus[],
    error: unknown,
  ): PayoutRunEnqueueError {
    const states = items.map((request, index) => {
      const result = results[index];
      if (result?.status === 'refused') return { index, requestId: result.requestId, status: 'refused' as const };
      return { index, requestId: requestIdOf(request), status: known[index]! };
    });
    if (error instanceof RedisStepTimeout) {
      return new PayoutRunEnqueueError(runId, 'timeout', states, error.message);
    }
    if (error instanceof PayoutLedgerUnavailableError) {
      return new PayoutRunEnqueueError(runId, error.reason, states, error.message.replace(/\.$/, ''), { cause: error });
    }
    const detail = `Redis or BullMQ reported an error (${error instanceof Error ? error.message : String(error)})`;
    return new PayoutRunEnqueueError(runId, 'error', states, escapeControls(detail, 300), { cause: error });
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
    chunks: readonly (readonly ValidItem[])[],
    runId: string,
    results: PayoutEnqueueItem[],
  ): Promise<PayoutEnqueueResult> {
    const carrier = this.instrumentation.payoutRunCarrier?.();
    const trace = carrier && Object.keys(carrier).length > 0 ? carrier : undefined;
    for (const chunk of chunks) {
      const valid = this.fingerprintChunk(chunk, results);
      if (valid.length === 0) continue;
      const writes = await this.store.outbox!.writePending(
        db,
        runId,
        valid.map(({ request, fingerprint }) => ({
          requestId: request.request_id,
          fingerprint,
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
    await closeBullmq(this.queue, { timeoutMs: QUEUE_CLOSE_TIMEOUT_MS });
    await this.store.close?.();
  }

  /** @internal Adds the job of a payout that the ledger holds and Redis lost (a no-op when the job is there). */
  async addJobs(
    payouts: readonly { request: CreatePayoutRequest; runId: string; trace?: PayoutJobData['trace'] }[],
  ): Promise<void> {
    await this.queue.addBulk(payouts.map(({ request, runId, trace }) => this.job(request, runId, trace)));
  }

  /**
   * Claims a chunk in the ledger: Redis's within `enqueueTimeoutMs`, a durable ledger's within its own time limit.
   * Items the ledger may have written before it failed are `maybe-queued`: its job repair queues what it holds.
   */
  private async claimChunk(
    runId: string,
    items: Parameters<PayoutLedger['claim']>[1],
    indexes: readonly number[],
    known: PayoutRunEnqueueItemStatus[],
  ): ReturnType<PayoutLedger['claim']> {
    if (!this.store.durable) return this.redisStep(this.store.claim(runId, items));
    try {
      return await this.store.claim(runId, items);
    } catch (error) {
      if (error instanceof PayoutLedgerUnavailableError && error.written !== 'none') {
        for (const index of indexes) known[index] = 'maybe-queued';
      }
      throw error;
    }
  }

  private job(request: CreatePayoutRequest, runId: string, trace: PayoutJobData['trace']): PayoutJobSpec {
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

/**
 * `pending`, its rejection marked as handled: it is awaited after another wait, which may last longer than it does. A
 * rejection nothing handles yet would end the process.
 */
function awaitedLater<T>(pending: Promise<T>): Promise<T> {
  pending.catch(() => undefined);
  return pending;
}

/** `items` in chunks of `CHUNK`. */
function chunksOf<T>(items: readonly T[]): T[][] {
  return Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, at) => items.slice(at * CHUNK, (at + 1) * CHUNK));
}

/** The items not refused, in chunks of `CHUNK` items of the array given (fewer where some were refused). */
function validChunks(items: readonly CreatePayoutRequest[], results: readonly PayoutEnqueueItem[]): ValidItem[][] {
  const chunks: ValidItem[][] = [];
  for (let start = 0; start < items.length; start += CHUNK) {
    const chunk: ValidItem[] = [];
    for (let index = start; index < Math.min(start + CHUNK, items.length); index++) {
      if (!results[index]) chunk.push({ request: items[index]!, index });
    }
    if (chunk.length > 0) chunks.push(chunk);
  }
  return chunks;
}

/** An item refused by `error`. */
function refusal(index: number, request: unknown, error: PayoutValidationError): PayoutEnqueueItem {
  return { index, requestId: requestIdOf(request), status: 'refused', error };
}

/** An item's `request_id` when it has a string one: an item refused, or one Redis failed on, may not. */
function requestIdOf(request: unknown): string | undefined {
  const requestId = (request as { request_id?: unknown } | null)?.request_id;
  return typeof requestId === 'string' ? requestId : undefined;
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
