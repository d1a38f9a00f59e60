import { randomUUID } from 'node:crypto';
import { stackOf } from '../common/error-stack.js';
import { printable } from '../common/printable.js';
import { EMPTY_CARRIER, NOOP_PAYOUT_RUN_JOB_TRACE } from '../common/noop-instrumentation.js';
import {
  type PayoutLedger,
  PayoutLedgerUnavailableError,
  type PayoutRunJobOutcome,
  type PayoutsInstrumentation,
  type PayoutsService,
} from '../index.js';
import { bullmq } from './bullmq-runtime.js';
import { INTERRUPTED, type PayoutAttemptVerdict, verdictOf } from './payout-attempt-verdict.js';
import { type PayoutJobData, readPayoutJobData } from './payout-job.js';
import type { PayoutRunEvent } from './payout-run-handler.decorators.js';
import type { PayoutRunHandler } from './payout-run-handlers.explorer.js';
import type {
  PayoutResolution,
  PayoutRunError,
  PayoutRunOutcome,
  PayoutRunResult,
  PayoutRunSummary,
} from './payout-run-results.js';
import type { PayoutRunsConfig } from './payout-runs-options.js';
import type { PayoutRecord } from './payout-state-store.js';
import type { PackageLogger } from '../common/package-logger.js';

/** The part of a BullMQ job that the processor reads. */
export interface PayoutJob {
  readonly id?: string;
  readonly data: unknown;
  readonly attemptsMade: number;
  readonly opts: { readonly attempts?: number };
}

/** What a completed job keeps as its return value: the payout's state when the job ended. */
export type PayoutJobResult = PayoutRunOutcome | 'missing' | 'lost';

/** The longest pause a `Retry-After` may ask of the account's queue, and the shortest (`Retry-After: 0`). */
const MAX_PAUSE_MS = 10 * 60_000;
const MIN_PAUSE_MS = 100;
/** The wait between two tries to record an outcome while the ledger cannot be reached. */
const SETTLE_RETRY_MS = 1000;

/** What is stored as a payout's outcome. */
interface StoredOutcome {
  readonly reply?: { readonly status: number; readonly body: Record<string, unknown> };
  readonly error?: PayoutRunError;
}

export interface PayoutRunProcessorDeps {
  readonly account: string;
  readonly config: PayoutRunsConfig;
  readonly store: PayoutLedger;
  /**
   * Pauses the account's queue on every worker for `ms` at least, never shortening a longer pause: resolves with the
   * pause in force. In Redis, with the queue, whichever ledger holds the payouts.
   */
  readonly pauseAtLeast: (ms: number) => Promise<number>;
  readonly payouts: PayoutsService;
  readonly handlers: ReadonlyMap<PayoutRunEvent, readonly PayoutRunHandler[]>;
  readonly logger: PackageLogger;
  readonly instrumentation: PayoutsInstrumentation;
}

/**
 * Sends one payout of a run at most once: the "sending" marker is written before the request, the outcome after it;
 * a job that finds a marker without an outcome (its worker died or lost its lock) parks the payout as unknown. Then the
 * result handlers run; one that throws fails the job, which runs again for the handlers only, the outcome being
 * stored already.
 */
export function createPayoutRunProcessor(deps: PayoutRunProcessorDeps): (job: PayoutJob) => Promise<PayoutJobResult> {
  return async (job) => {
    const data = readPayoutJobData(job.data);
    if (!data) throw new bullmq.UnrecoverableError(`Job ${job.id} holds no payout this version can read; not retried`);
    const info = { runId: data.runId, requestId: data.request.request_id, attempt: job.attemptsMade + 1 };
    const trace =
      deps.instrumentation.startPayoutRunJob?.(data.trace ?? EMPTY_CARRIER, info) ?? NOOP_PAYOUT_RUN_JOB_TRACE;
    const decided: Decided = { outcome: undefined };
    let result: PayoutJobResult;
    try {
      result = await trace.run(() => processPayout(deps, job, data, decided));
    } catch (error) {
      trace.end(decided.outcome, error instanceof Error ? error.constructor.name : 'Error');
      throw error;
    }
    trace.end(decided.outcome, undefined);
    return result;
  };
}

/** The outcome the attempt decided, for its trace: set once the outcome is stored. */
interface Decided {
  outcome: PayoutRunJobOutcome | undefined;
}

async function processPayout(
  deps: PayoutRunProcessorDeps,
  job: PayoutJob,
  data: PayoutJobData,
  decided: Decided,
): Promise<PayoutJobResult> {
  const { request, runId } = data;
  const requestId = request.request_id;
  const token = randomUUID();
  const begun = await beginOrPause(deps, data, token);
  if (begun.step === 'missing') {
    deps.logger.warn(`${subject(data)} has no record (expired or removed); not sent`);
    return 'missing';
  }
  if (begun.step === 'interrupted') {
    const parked = await deps.store.settle(requestId, runId, '*', 'unknown', { error: INTERRUPTED });
    if (parked !== 'lost') decided.outcome = 'unknown';
    if (parked === 'completed') deps.instrumentation.payoutRunCompleted?.(runId);
    deps.logger.warn(`${subject(data)}: its worker stopped while sending; parked as unknown, not sent again`);
  } else if (begun.step === 'send') {
    const settled = await send(deps, job, data, token, begun, decided);
    if (settled === 'lost') return 'lost';
    // Just stored: what the handlers need is known without reading it back.
    return runHandlers(deps, data, settled);
  }
  const record = await deps.store.read(requestId);
  if (!record) return 'missing';
  return runHandlers(deps, data, record);
}

/** Sends the payout once and stores the outcome; throws to have BullMQ retry or pause. */
async function send(
  deps: PayoutRunProcessorDeps,
  job: PayoutJob,
  data: PayoutJobData,
  token: string,
  begun: { attempt: number; resolution: string | undefined },
  decided: Decided,
): Promise<PayoutRecord | 'lost'> {
  const { request, runId } = data;
  const requestId = request.request_id;
  let outcome: { state: 'sent' | 'refused' | 'unknown' | 'retrying'; stored: StoredOutcome };
  let verdict: PayoutAttemptVerdict | undefined;
  try {
    // The run's queue owns the retries: the client sends once.
    const reply = await deps.payouts.createPayout(request, { maxRetries: 0 });
    outcome = { state: 'sent', stored: { reply: { status: reply.status, body: reply.body } } };
  } catch (error) {
    verdict = verdictOf(error);
    outcome = { state: stateAfter(verdict, job, deps.config), stored: { error: verdict.error } };
  }
  const settled = await settleWhenReachable(deps, data, token, outcome.state, outcome.stored);
  if (settled === 'lost') {
    deps.logger.error(
      `${subject(data)} ended ${outcome.state} after it was parked as unknown (this worker had lost its lock); ` +
        'resolve it with that in mind',
    );
    return 'lost';
  }
  decided.outcome = outcome.state;
  if (settled === 'completed') deps.instrumentation.payoutRunCompleted?.(runId);
  if (outcome.state !== 'retrying' || verdict === undefined) {
    return {
      requestId,
      runId,
      state: outcome.state,
      attempt: begun.attempt,
      outcome: JSON.stringify(outcome.stored),
      handled: [],
      completesRun: settled === 'completed',
      resolution: begun.resolution,
      since: Date.now(),
    };
  }
  if (verdict.kind === 'throttled') {
    const pauseMs = Math.min(Math.max(verdict.retryAfterMs ?? deps.config.backoffMs, MIN_PAUSE_MS), MAX_PAUSE_MS);
    const inForceMs = await deps.pauseAtLeast(pauseMs);
    deps.logger.warn(
      `${subject(data)}: HTTP ${verdict.error.status}; the account's queue pauses for ${pauseMs} ms` +
        (inForceMs > pauseMs ? ` (it stays paused for the ${inForceMs} ms of a longer pause already asked)` : ''),
    );
    // Back to the waiting jobs without using up an attempt: the provider did not process it.
    throw bullmq.Worker.RateLimitError();
  }
  throw new Error(`${subject(data)} is retried: ${verdict.error.message}`);
}

/**
 * Writes the mark before sending. A ledger that cannot be reached pauses the account's queue: the job goes back to
 * the waiting ones without using up an attempt, and the workers take jobs again once the pause ends, to find the
 * ledger back or pause again.
 */
async function beginOrPause(
  deps: PayoutRunProcessorDeps,
  data: PayoutJobData,
  token: string,
): ReturnType<PayoutLedger['begin']> {
  try {
    return await deps.store.begin(data.request.request_id, data.runId, token, deps.config.providerDedupesRequestId);
  } catch (error) {
    if (!(error instanceof PayoutLedgerUnavailableError)) throw error;
    deps.logger.warn(
      `${subject(data)}: ${error.message.replace(/\.$/, '')}; the account's queue pauses for ${deps.config.backoffMs} ms`,
    );
    await deps.pauseAtLeast(deps.config.backoffMs);
    throw bullmq.Worker.RateLimitError();
  }
}

/**
 * Records the outcome of a request that left. While the ledger cannot be reached, tries again for up to
 * `lockDurationMs` (the job's lock is renewed meanwhile); after that the job fails, and the next attempt finds the
 * mark and parks the payout as unknown: never sent again. Said once when the first try fails and once when a later one
 * records it, not at every try: each payout being sent would log a line a second for as long as the ledger is away.
 */
async function settleWhenReachable(
  deps: PayoutRunProcessorDeps,
  data: PayoutJobData,
  token: string,
  state: 'sent' | 'refused' | 'unknown' | 'retrying',
  stored: StoredOutcome,
): ReturnType<PayoutLedger['settle']> {
  const { lockDurationMs } = deps.config;
  const giveUpAt = Date.now() + lockDurationMs;
  for (let tries = 1; ; tries++) {
    try {
      const settled = await deps.store.settle(data.request.request_id, data.runId, token, state, stored);
      if (tries > 1) deps.logger.log(`${subject(data)} ended ${state}: recorded at try ${tries}`);
      return settled;
    } catch (error) {
      if (!(error instanceof PayoutLedgerUnavailableError) || Date.now() >= giveUpAt) throw error;
      if (tries === 1) {
        deps.logger.warn(
          `${subject(data)} ended ${state}, not yet recorded: ${error.message.replace(/\.$/, '')}; trying again ` +
            `every ${SETTLE_RETRY_MS} ms for up to lockDurationMs (${lockDurationMs} ms)`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, SETTLE_RETRY_MS));
    }
  }
}

/** Where a failed request leaves the payout. */
function stateAfter(
  verdict: PayoutAttemptVerdict,
  job: PayoutJob,
  config: PayoutRunsConfig,
): 'refused' | 'unknown' | 'retrying' {
  const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  switch (verdict.kind) {
    case 'refused':
      return 'refused';
    case 'throttled':
      return 'retrying';
    case 'not-sent':
      // Surely never processed: after the last attempt, refused, since no payout exists.
      return lastAttempt ? 'refused' : 'retrying';
    case 'unknown':
      return config.providerDedupesRequestId && !lastAttempt ? 'retrying' : 'unknown';
  }
}

/** Runs the handlers of the stored outcome that have not yet succeeded, then those of the run's end. */
async function runHandlers(
  deps: PayoutRunProcessorDeps,
  data: PayoutJobData,
  record: PayoutRecord,
): Promise<PayoutJobResult> {
  if (record.state !== 'sent' && record.state !== 'refused' && record.state !== 'unknown') {
    return 'missing';
  }
  const calls: { name: string; run: () => unknown }[] = [];
  const result = resultOf(deps.account, data, record);
  for (const handler of deps.handlers.get(record.state) ?? []) {
    calls.push({ name: handler.name, run: () => handler.invoke(result) });
  }
  if (record.completesRun) {
    const summary = await summaryOf(deps, record.runId);
    for (const handler of deps.handlers.get('run-completed') ?? []) {
      calls.push({ name: `run-completed:${handler.name}`, run: () => handler.invoke(summary) });
    }
  }
  const pending = calls.filter((call) => !record.handled.includes(call.name));
  if (pending.length === 0) return record.state;
  const outcomes = await Promise.allSettled(pending.map(async (call) => call.run()));
  const succeeded = pending.filter((_, index) => outcomes[index]!.status === 'fulfilled').map((call) => call.name);
  const failed = pending.filter((_, index) => outcomes[index]!.status === 'rejected');
  // Kept for a job that runs again, so that a handler that succeeded is not run again: one with a handler that failed,
  // and the payout that completes its run, whose end is handled once even when BullMQ runs its job again (its worker
  // lost the lock, a stalled event loop, before the job was marked completed).
  if (failed.length === 0 && !record.completesRun) return record.state;
  if (succeeded.length > 0) await deps.store.markHandled(record.requestId, [...record.handled, ...succeeded]);
  if (failed.length === 0) return record.state;
  outcomes.forEach((outcome, index) => {
    if (outcome.status === 'rejected') {
      deps.logger.warn(`${pending[index]!.name} failed on ${subject(data)}: ${stackOf(outcome.reason)}`);
    }
  });
  throw new Error(
    `Result handlers ${failed.map((call) => call.name).join(', ')} failed on ${subject(data)}; ` +
      'they run again, the payout is not sent again',
  );
}

function resultOf(account: string, data: PayoutJobData, record: PayoutRecord): PayoutRunResult {
  const stored = record.outcome === undefined ? {} : (JSON.parse(record.outcome) as StoredOutcome);
  const resolution = record.resolution === undefined ? undefined : (JSON.parse(record.resolution) as PayoutResolution);
  return {
    account,
    runId: record.runId,
    requestId: record.requestId,
    request: data.request,
    outcome: record.state as PayoutRunOutcome,
    requestsSent: record.attempt,
    attempt: record.attempt,
    ...(stored.reply !== undefined && record.state === 'sent' && { reply: stored.reply }),
    ...(stored.error !== undefined && record.state !== 'sent' && { error: stored.error }),
    ...(resolution !== undefined && { resolution }),
  };
}

async function summaryOf(deps: PayoutRunProcessorDeps, runId: string): Promise<PayoutRunSummary> {
  const progress = await deps.store.counts(runId);
  const counts = progress?.counts ?? { queued: 0, sending: 0, retrying: 0, sent: 0, refused: 0, unknown: 0, total: 0 };
  return { account: deps.account, runId, counts };
}

/** How log lines name a payout: its request_id and run, as printable text. */
export function subject({ request, runId }: PayoutJobData): string {
  return `Payout ${printable(request.request_id)} of run ${printable(runId)}`;
}
