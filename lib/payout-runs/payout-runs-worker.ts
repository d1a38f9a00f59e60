import { setTimeout as sleep } from 'node:timers/promises';
import { type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit, type Type } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { Job, Worker } from 'bullmq';
import { throttledErrorLog } from '../common/throttled-error-log.js';
import { queueClient } from '../common/bullmq-queue-health.js';
import { closeBullmq, startupCheckSettled } from '../common/close-bullmq.js';
import { endsWithin } from '../common/ends-within.js';
import { untilAborted } from '../common/until-aborted.js';
import { withDeadline } from '../common/with-deadline.js';
import {
  type CreatePayoutRequest,
  getPayoutsInstrumentationToken,
  getPayoutsServiceToken,
  type PayoutLedger,
  PayoutLedgerUnavailableError,
  PayoutsConfigError,
  type PayoutsInstrumentation,
  PayoutsService,
  RedisEvictionPolicyError,
} from '../index.js';
import { bullmq } from './bullmq-runtime.js';
import { INTERRUPTED } from './payout-attempt-verdict.js';
import { PayoutOutboxRelay } from './payout-outbox-relay.js';
import { type PayoutJobData, readPayoutJobData } from './payout-job.js';
import { PayoutJobRepair } from './payout-job-repair.js';
import { createPayoutRunProcessor, type PayoutJobResult, subject } from './payout-run-processor.js';
import { PayoutRunProgressReporter } from './payout-run-progress-reporter.js';
import { explorePayoutRunHandlers, handlersLine, type PayoutRunHandler } from './payout-run-handlers.explorer.js';
import { RUNS_OWNER, type PayoutRunsConfig } from './payout-runs-options.js';
import type { PayoutRunsService } from './payout-runs.service.js';
import { PackageLogger } from '../common/package-logger.js';
import { checkRedisDurability, readRedisDurability } from './redis-durability.js';

/** How long the bootstrap waits for Redis to answer the check of its settings before it goes on without the worker. */
const REDIS_CHECK_AT_BOOT_MS = 5000;
/** The wait between two reads of the settings while Redis does not answer. */
const REDIS_CHECK_RETRY_MS = 1000;
/** The wait between two tries to park a payout whose job stalled too often, while the ledger cannot be reached. */
const PARK_RETRY_MS = 1000;
/** What a park of a stalled payout settles with once the worker shuts down (see `parkStalled`). */
const SHUT_DOWN = Symbol('shut down');

class RedisNotYetAnswering extends Error {}

/**
 * The worker of an account's runs, on instances with `worker: true`: it starts once every module is initialised (the
 * handlers discovered) and Redis's eviction policy is accepted, and on shutdown stops taking payouts and lets the ones
 * being sent finish, up to `shutdownTimeoutMs`: in `onModuleDestroy()`, before the client (`onApplicationShutdown()`)
 * and the run's queue close.
 */
export class PayoutRunsWorker implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new PackageLogger('PayoutRuns');
  private payouts: PayoutsService | undefined;
  private worker: Worker | undefined;
  /** Moves the payouts written in committed transactions to the queue, beside the worker (a durable ledger only). */
  private relay: PayoutOutboxRelay | undefined;
  private repair: PayoutJobRepair | undefined;
  /** Payouts this instance's worker is processing now. */
  private processing = 0;
  private progress: PayoutRunProgressReporter | undefined;
  /** Parks of payouts whose job stalled too often, still under way (see `parkStalled`). */
  private readonly parking = new Set<Promise<void>>();
  /** Aborts on shutdown: a park still under way then stops waiting, and says what is left to do. */
  private readonly shutdown = new AbortController();

  constructor(
    private readonly config: PayoutRunsConfig,
    private readonly runs: PayoutRunsService,
    private readonly moduleRef: ModuleRef,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** This instance's BullMQ worker while it runs, for health checks. */
  get running(): Worker | undefined {
    return this.worker;
  }

  /** The account must be a `PayoutsModule` registration of the app, whichever module imports it. */
  async onModuleInit(): Promise<void> {
    const token = getPayoutsServiceToken(this.runs.account) as Type<PayoutsService> | string;
    let payouts: unknown;
    try {
      payouts = this.moduleRef.get(token, { strict: false });
    } catch {
      payouts = undefined;
    }
    if (!(payouts instanceof PayoutsService)) {
      // Nest calls no shutdown hook after a failed bootstrap: the queue's connection would keep the process alive.
      const { queue } = this.runs;
      await closeBullmq(queue);
      throw new PayoutsConfigError(
        'account',
        `the name of a PayoutsModule registration of the app, but there is none named '${this.runs.account}'`,
        RUNS_OWNER,
      );
    }
    this.payouts = payouts;
    // Exported by the same registration: the runs record on the account's telemetry and emit its service's events.
    this.runs.instrumentation = this.moduleRef.get<PayoutsInstrumentation>(
      getPayoutsInstrumentationToken(this.runs.account),
      { strict: false },
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.worker) return;
    const { connection, prefix, concurrency, limiter, lockDurationMs } = this.config;
    const handlers = explorePayoutRunHandlers(this.discovery, this.scanner, this.runs.account);
    for (const [event, list] of handlers) this.logger.log(handlersLine(this.runs.account, event, list));
    const { queue, store } = this.runs;
    const processor = createPayoutRunProcessor({
      account: this.runs.account,
      config: this.config,
      store,
      pauseAtLeast: (ms) => this.runs.redisState.pauseAtLeast(ms),
      payouts: this.payouts!,
      handlers,
      logger: this.logger,
      instrumentation: this.runs.instrumentation,
    });
    const counted = async (job: Parameters<typeof processor>[0]): Promise<PayoutJobResult> => {
      this.processing += 1;
      try {
        return await processor(job);
      } finally {
        this.processing -= 1;
      }
    };
    const worker = new bullmq.Worker<unknown, PayoutJobResult>(queue.name, counted, {
      connection,
      prefix,
      concurrency,
      limiter,
      lockDuration: lockDurationMs,
      // A stalled payout (its worker died) is looked for as often as a lock lasts; taken up again, it is parked.
      stalledInterval: lockDurationMs,
      maxStalledCount: 10,
      // Started once Redis's settings are checked (startOnceChecked).
      autorun: false,
    });
    worker.on('error', throttledErrorLog(this.logger, `Worker of queue ${queue.name}`));
    this.reportProgress(worker, handlers.get('progress') ?? []);
    worker.on('failed', (job, error) => {
      if (!job) return;
      const data = readPayoutJobData(job.data);
      const what = data ? subject(data) : `Job ${job.id}`;
      if (data && job.deferredFailure !== undefined) {
        // Not failed for good: parked, and its job retried for its handlers, which the park's own lines say.
        this.parkStalled(data, what, job);
        return;
      }
      const final = job.attemptsMade >= (job.opts.attempts ?? 1) || error.name === 'UnrecoverableError';
      if (final) {
        this.logger.error(`${what} failed for good: ${error.message}. Job ${job.id} stays in the failed set`);
      } else {
        this.logger.warn(`${what}: attempt ${job.attemptsMade} of ${job.opts.attempts ?? 1} failed (${error.message})`);
      }
    });
    this.worker = worker;
    await this.startOnceChecked(worker);
    // After the check, so that a worker refused at boot leaves nothing running.
    this.repair = new PayoutJobRepair(this.runs, lockDurationMs, this.logger);
    this.repair.start();
    this.startRelay();
  }

  /**
   * The outbox's relay runs where a worker runs: an instance that only enqueues (`worker: false`) writes pending
   * payouts, and the workers' instances, which need the queue filled, move them.
   */
  private startRelay(): void {
    const { outbox } = this.runs.store;
    if (!outbox) return;
    const account = this.runs.account;
    this.relay = new PayoutOutboxRelay(
      outbox,
      // The job's id comes from the request_id: a batch added again after a relay died before marking it is a no-op.
      (payouts) =>
        this.runs.addJobs(
          payouts.map(({ request, runId, trace }) => ({
            request: request as unknown as CreatePayoutRequest,
            runId,
            ...(trace !== undefined && { trace }),
          })),
        ),
      this.logger,
      `account '${account}'`,
    );
    this.relay.start();
  }

  /**
   * Starts the worker once Redis's eviction policy and persistence are read and accepted (`redis-durability.ts`). The
   * bootstrap waits for Redis up to `REDIS_CHECK_AT_BOOT_MS`, so that a refused policy fails it; a Redis that answers
   * later is checked then, and a refusal is an ERROR log, the worker left stopped (as the liveness check reports).
   */
  private async startOnceChecked(worker: Worker): Promise<void> {
    const checked = this.checkRedis(worker);
    try {
      await withDeadline(checked, REDIS_CHECK_AT_BOOT_MS, () => new RedisNotYetAnswering());
    } catch (error) {
      if (!(error instanceof RedisNotYetAnswering)) {
        // Nest calls no shutdown hook after a failed bootstrap: the connections would keep the process alive.
        this.worker = undefined;
        await Promise.all([closeBullmq(worker, { force: true }), closeBullmq(this.runs.queue, { force: true })]);
        throw error;
      }
      this.logger.warn(
        `Redis of queue ${worker.name} did not answer within ${REDIS_CHECK_AT_BOOT_MS} ms: its worker starts once ` +
          'Redis answers and its eviction policy is checked',
      );
      checked.then(
        (answered) => answered && this.run(worker),
        (refusal: Error) => {
          // Kept, closed, so that the liveness check reports it stopped.
          this.logger.error(refusal.message);
          void closeBullmq(worker, { force: true });
        },
      );
      return;
    }
    this.run(worker);
  }

  /** Reads Redis's settings until it answers, unless the worker is shut down meanwhile: `false` then. */
  private async checkRedis(worker: Worker): Promise<boolean> {
    for (;;) {
      try {
        const durability = await readRedisDurability(await queueClient(this.runs.queue));
        checkRedisDurability(durability, this.config.acceptEvictionPolicy, worker.name, this.logger);
        return true;
      } catch (error) {
        if (error instanceof RedisEvictionPolicyError) throw error;
        if (this.worker !== worker) return false;
        await sleep(REDIS_CHECK_RETRY_MS);
        if (this.worker !== worker) return false;
      }
    }
  }

  private run(worker: Worker): void {
    if (this.worker !== worker) return;
    worker.run().catch((error: unknown) => this.logger.error(`Worker of queue ${worker.name} stopped`, error));
  }

  /** With `@OnPayoutRunProgress()` handlers, follows each run whose payouts this worker takes up or ends. */
  private reportProgress(worker: Worker, handlers: readonly PayoutRunHandler[]): void {
    if (handlers.length === 0) return;
    const { runs } = this;
    const reporter = new PayoutRunProgressReporter(
      runs.account,
      (runId) => runs.progress(runId),
      handlers,
      this.config.progressIntervalMs,
      this.logger,
    );
    const moved = (job: { data: unknown } | undefined) => {
      const runId = job && readPayoutJobData(job.data)?.runId;
      if (runId !== undefined) reporter.moved(runId);
    };
    worker.on('active', moved);
    worker.on('completed', moved);
    worker.on('failed', moved);
    this.progress = reporter;
  }

  /**
   * BullMQ fails a job that stalled more than `maxStalledCount` times without running it again: its marker, if one
   * was written, would leave the payout counted as sending for ever, though it may have been sent. Parked as unknown,
   * then its job runs again, as a parked payout's would, for its unknown-outcome handlers: it finds the payout parked
   * and sends nothing. While the ledger cannot be reached, tried again every second until it answers or this worker
   * shuts down, which waits for no ledger call; a payout not parked by then is named with its job, which parks it
   * when retried from the failed set (its next attempt finds the marker), never sending it again.
   */
  private parkStalled(data: PayoutJobData, what: string, job: Job): void {
    const parked = this.parkOnceReachable(data, what, job).finally(() => this.parking.delete(parked));
    this.parking.add(parked);
  }

  private async parkOnceReachable(data: PayoutJobData, what: string, job: Job): Promise<void> {
    const { request, runId } = data;
    const notParked = (why: string, error?: unknown) =>
      this.logger.error(
        `${what} stalled too often and could not be parked${why}: retry job ${job.id} from the failed set, which ` +
          'parks it as unknown',
        ...(error === undefined ? [] : [error]),
      );
    let parked: Awaited<ReturnType<PayoutLedger['settle']>> | typeof SHUT_DOWN;
    for (let tries = 1; ; tries++) {
      try {
        parked = await this.untilShutDown(
          this.runs.store.settle(request.request_id, runId, '*', 'unknown', { error: INTERRUPTED }),
        );
        break;
      } catch (error) {
        if (!(error instanceof PayoutLedgerUnavailableError)) return notParked('', error);
        if (tries === 1) {
          this.logger.warn(
            `${what} stalled too often, not parked yet: ${error.message.replace(/\.$/, '')}; trying again every ` +
              `${PARK_RETRY_MS} ms until the ledger answers`,
          );
        }
        // Unreferenced: a wait cut short by the shutdown keeps no process alive.
        if ((await this.untilShutDown(sleep(PARK_RETRY_MS, undefined, { ref: false }))) === SHUT_DOWN) {
          parked = SHUT_DOWN;
          break;
        }
      }
    }
    if (parked === SHUT_DOWN) return notParked(' before the worker shut down');
    if (parked === 'lost') return this.unmarkedStall(data, what, job);
    if (parked === 'completed') this.runs.instrumentation.payoutRunCompleted?.(runId);
    const handlersLater = (error?: unknown) =>
      this.logger.error(
        `${what} stalled too often; parked as unknown, not sent again. Its handlers run once job ${job.id} is ` +
          'retried from the failed set',
        ...(error === undefined ? [] : [error]),
      );
    let retried: unknown;
    try {
      retried = await this.untilShutDown(job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }));
    } catch (error) {
      return handlersLater(error);
    }
    if (retried === SHUT_DOWN) return handlersLater();
    this.logger.warn(
      `${what} stalled too often; parked as unknown, not sent again; its job runs again for its handlers`,
    );
  }

  /**
   * No marker to park: an outcome was recorded meanwhile, whose handlers its job ran, or no attempt since the last
   * outcome (if any) got as far as writing one, and no request left since. The latter is still to be sent: not by the
   * worker (a job that stalls before it begins may stall again, for ever), but by a person, whom the line names its job.
   */
  private async unmarkedStall({ request }: PayoutJobData, what: string, job: Job): Promise<void> {
    const record = await this.untilShutDown(this.runs.store.read(request.request_id)).catch(() => undefined);
    if (record === SHUT_DOWN || (record?.state !== 'queued' && record?.state !== 'retrying')) return;
    // A retrying payout had an attempt whose outcome allows another (the provider did not take it, or dedupes it).
    const since =
      record.state === 'queued'
        ? 'any request left: it is still queued, never sent'
        : "its next attempt's request left: it is still retrying, nothing sent since its last attempt";
    this.logger.error(`${what} stalled too often before ${since}. Retry job ${job.id} from the failed set to send it`);
  }

  /**
   * `pending`, or `SHUT_DOWN` once the worker shuts down, whichever comes first: the shutdown waits for no call or wait
   * of a park.
   */
  private untilShutDown<T>(pending: Promise<T>): Promise<T | typeof SHUT_DOWN> {
    return untilAborted(pending, this.shutdown.signal, () => SHUT_DOWN);
  }

  async onModuleDestroy(): Promise<void> {
    this.progress?.close();
    // A park of a stalled payout still under way stops waiting, and says what is left to do (see `parkStalled`).
    this.shutdown.abort();
    await Promise.all(this.parking);
    const { shutdownTimeoutMs } = this.config;
    // Side by side, as none needs another stopped, and waiting for one after another would add their waits up: the
    // outbox relay's batch under way (moved, or left pending for another relay, within its own time limits), the job
    // check and the payouts being sent (each up to shutdownTimeoutMs). All end before the queue closes.
    await Promise.all([this.relay?.stop(), this.repair?.stop(shutdownTimeoutMs), this.closeWorker(shutdownTimeoutMs)]);
    this.relay = undefined;
  }

  /** Stops taking payouts, and waits for those being sent up to `shutdownTimeoutMs`. */
  private async closeWorker(shutdownTimeoutMs: number): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    await startupCheckSettled(worker);
    // Idle, nothing needs waiting for: a forced close, as BullMQ's waiting one sits out a rate-limit pause (a
    // provider's Retry-After) first. A payout fetched meanwhile keeps its lock, and another worker takes it up.
    if (await endsWithin(worker.close(this.processing === 0), shutdownTimeoutMs)) return;
    this.logger.warn(this.closeTimedOutLine(shutdownTimeoutMs));
  }

  /**
   * What the worker leaves behind when it did not close in time. The count is read then, not when the wait began: a
   * payout being sent then may have had its outcome recorded since, leaving only its job's completion to Redis.
   */
  private closeTimedOutLine(shutdownTimeoutMs: number): string {
    const waited = `after shutdownTimeoutMs (${shutdownTimeoutMs} ms)`;
    if (this.processing > 0) {
      return (
        `Payouts still being sent ${waited} are left to stop with the process; another worker parks them as unknown ` +
        'once their locks expire'
      );
    }
    return (
      `No payout is being sent, but Redis had not answered the worker ${waited}: it is left to stop with the ` +
      'process. A job whose outcome is recorded but not its completion is taken up by another worker once its lock ' +
      'expires, which sends nothing again and runs its result handlers'
    );
  }
}
