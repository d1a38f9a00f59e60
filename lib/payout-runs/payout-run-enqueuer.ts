import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { eachInFlight } from '../common/each-in-flight.js';
import { escapeControls } from '../common/printable.js';
import {
  type CreatePayoutRequest,
  type PayoutLedger,
  type PayoutLedgerTransaction,
  PayoutLedgerUnavailableError,
  PayoutRequestConflictError,
  PayoutRunEnqueueError,
  type PayoutRunEnqueueItemStatus,
  PayoutsCallOptionsError,
  PayoutValidationError,
} from '../index.js';
import { isCertainlyValidPayoutRequest } from '../payouts/payout-request-fast-check.js';
import { validatePayoutRequest } from '../payouts/payout-request-validator.js';
import { type PayoutJobData, payoutFingerprint, type PayoutJobSpec, payoutJobSpec } from './payout-job.js';
import type { PayoutRunsConfig } from './payout-runs-options.js';
import { RedisReplyTimeout, redisReply } from './redis-reply.js';

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

/** Items validated, claimed and added at once while enqueueing. */
const CHUNK = 500;
/** Adds of a chunk's jobs on their way at once: Redis runs one while the next is encoded and sent. */
const ADDS_IN_FLIGHT = 2;
const RUN_ID = /^[\w.-]{1,100}$/;

/**
 * What `PayoutRunsService.enqueue()` does: validates the items, claims their `request_id`s in the ledger and adds the
 * jobs of those it queued, saying of each item what became of it, or, should Redis or the ledger fail, what is known.
 */
export class PayoutRunEnqueuer {
  constructor(
    private readonly queue: Queue,
    private readonly store: PayoutLedger,
    private readonly config: PayoutRunsConfig,
    /** The trace context the jobs keep: the enqueue's, when something records traces. */
    private readonly traceOf: () => PayoutJobData['trace'],
  ) {}

  /** `PayoutRunsService.enqueue()`. */
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
    const trace = this.traceOf();
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
      (fresh ? claimed.fresh : claimed.again).push({
        index,
        job: payoutJobSpec(request, claim.runId, trace, this.config),
      });
    });
    return claimed;
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

  /** Adds the jobs of claimed payouts, saying of each item, should Redis fail, what is known. */
  private async addJobsOf(jobs: readonly PayoutJobSpecAt[], known: PayoutRunEnqueueItemStatus[]): Promise<void> {
    for (const { index } of jobs) known[index] = 'maybe-queued';
    await this.redisStep(this.queue.addBulk(jobs.map(({ job }) => job)));
    for (const { index } of jobs) known[index] = 'queued';
  }

  /** One reply of Redis while enqueueing, bounded by `enqueueTimeoutMs`. */
  private redisStep<T>(pending: Promise<T>): Promise<T> {
    return redisReply(pending, this.config.enqueueTimeoutMs);
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
    if (error instanceof RedisReplyTimeout) {
      return new PayoutRunEnqueueError(runId, 'timeout', states, error.message);
    }
    if (error instanceof PayoutLedgerUnavailableError) {
      return new PayoutRunEnqueueError(runId, error.reason, states, error.message.replace(/\.$/, ''), { cause: error });
    }
    const detail = `Redis or BullMQ reported an error (${error instanceof Error ? error.message : String(error)})`;
    return new PayoutRunEnqueueError(runId, 'error', states, escapeControls(detail, 300), { cause: error });
  }

  /** `enqueue()` with `db`: the valid items written as pending in the caller's transaction, nothing queued. */
  private async writePending(
    db: PayoutLedgerTransaction,
    chunks: readonly (readonly ValidItem[])[],
    runId: string,
    results: PayoutEnqueueItem[],
  ): Promise<PayoutEnqueueResult> {
    const trace = this.traceOf();
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
