import { type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit, type Type } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { Worker } from 'bullmq';
import { throttledErrorLog } from '../common/throttled-error-log.js';
import { withDeadline } from '../common/with-deadline.js';
import {
  type CreatePayoutRequest,
  getPayoutsInstrumentationToken,
  getPayoutsServiceToken,
  PayoutsConfigError,
  type PayoutsInstrumentation,
  PayoutsService,
} from '../index.js';
import { bullmq } from './bullmq-runtime.js';
import { INTERRUPTED } from './payout-attempt-verdict.js';
import { PayoutOutboxRelay } from './payout-outbox-relay.js';
import { type PayoutJobData, readPayoutJobData } from './payout-job.js';
import { PayoutJobRepair } from './payout-job-repair.js';
import { createPayoutRunProcessor, type PayoutJobResult, subject } from './payout-run-processor.js';
import { explorePayoutRunHandlers } from './payout-run-handlers.explorer.js';
import { RUNS_OWNER, type PayoutRunsConfig } from './payout-runs-options.js';
import type { PayoutRunsService } from './payout-runs.service.js';
import { PackageLogger } from '../common/package-logger.js';

/**
 * The worker of an account's runs, on instances with `worker: true`: it starts once every module is initialised (the
 * handlers discovered), and on shutdown stops taking payouts and lets the ones being sent finish, up to
 * `shutdownTimeoutMs`: in `onModuleDestroy()`, before the client (`onApplicationShutdown()`) and the run's queue close.
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
      await withDeadline(queue.close(), 1000, () => new Error('timeout')).catch(() => queue.disconnect());
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

  onApplicationBootstrap(): void {
    if (!this.config.worker) return;
    const { connection, prefix, concurrency, limiter, lockDurationMs } = this.config;
    const handlers = explorePayoutRunHandlers(this.discovery, this.scanner, this.runs.account);
    for (const [event, list] of handlers) {
      this.logger.log(`Account '${this.runs.account}': ${event} payouts go to ${list.map((h) => h.name).join(', ')}`);
    }
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
    });
    worker.on('error', throttledErrorLog(this.logger, `Worker of queue ${queue.name}`));
    worker.on('failed', (job, error) => {
      if (!job) return;
      const data = readPayoutJobData(job.data);
      const what = data ? subject(data) : `Job ${job.id}`;
      if (data && job.deferredFailure !== undefined) this.parkStalled(data, what);
      const final = job.attemptsMade >= (job.opts.attempts ?? 1) || error.name === 'UnrecoverableError';
      if (final) {
        this.logger.error(`${what} failed for good: ${error.message}. Job ${job.id} stays in the failed set`);
      } else {
        this.logger.warn(`${what}: attempt ${job.attemptsMade} of ${job.opts.attempts ?? 1} failed (${error.message})`);
      }
    });
    this.worker = worker;
    if (store.durable && store.unsettled) {
      this.repair = new PayoutJobRepair(this.runs, lockDurationMs, this.logger);
      this.repair.start();
    }
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
   * BullMQ fails a job that stalled more than `maxStalledCount` times without running it again: its marker, if one
   * was written, would leave the payout counted as sending for ever, though it may have been sent. Parked as unknown.
   */
  private parkStalled(data: PayoutJobData, what: string): void {
    const { request, runId } = data;
    this.runs.store.settle(request.request_id, runId, '*', 'unknown', { error: INTERRUPTED }).then(
      (settled) => {
        if (settled === 'completed') this.runs.instrumentation.payoutRunCompleted?.(runId);
        if (settled !== 'lost') this.logger.warn(`${what} stalled too often; parked as unknown, not sent again`);
      },
      (error: unknown) => this.logger.error(`${what} stalled too often and could not be parked`, error),
    );
  }

  async onModuleDestroy(): Promise<void> {
    // Its batch under way ends first (moved, or left pending for another relay), before the queue closes.
    await this.relay?.stop();
    this.relay = undefined;
    await this.repair?.stop();
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    const { shutdownTimeoutMs } = this.config;
    try {
      // Idle, nothing needs waiting for: a forced close, as BullMQ's waiting one sits out a rate-limit pause (a
      // provider's Retry-After) first. A payout fetched meanwhile keeps its lock, and another worker takes it up.
      await withDeadline(worker.close(this.processing === 0), shutdownTimeoutMs, () => new Error('timeout'));
    } catch {
      this.logger.warn(
        `Payouts still being sent after shutdownTimeoutMs (${shutdownTimeoutMs} ms) are left to stop with the ` +
          'process; another worker parks them as unknown once their locks expire',
      );
    }
  }
}
