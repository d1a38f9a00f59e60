import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { expect } from 'vitest';
import {
  type CreatePayoutRequest,
  PayoutRunResolveError,
  PayoutsModule,
  type PayoutsModuleOptions,
} from 'nestjs-payouts';
import {
  OnPayoutOutcomeUnknown,
  OnPayoutRefused,
  OnPayoutRunCompleted,
  OnPayoutSent,
  type PayoutRunResult,
  PayoutRunsModule,
  type PayoutRunsOptions,
  PayoutRunsService,
  type PayoutRunSummary,
  getPayoutRunsToken,
  payoutJobId,
} from 'nestjs-payouts/payout-runs';
import type { Redis } from 'ioredis';
import { RecordingLogger } from '../recording-logger.js';
import { eventually } from '../support/eventually.js';

export const API_KEY = 'runs-api-key-3f9d1c';
export const ACCESS_TOKEN = 'runs-access-token-8a2e4b';

/** Records what the result handlers receive; `failSent` (`failUnknown`) makes that handler throw that many times first. */
@Injectable()
export class RecordedResults {
  readonly sent: PayoutRunResult[] = [];
  readonly refused: PayoutRunResult[] = [];
  readonly unknown: PayoutRunResult[] = [];
  readonly completed: PayoutRunSummary[] = [];
  failSent = 0;
  failUnknown = 0;
  /** The sent handler's next call keeps the event loop busy this long first, as a loaded machine can. */
  starveOnSentMs = 0;
  /** The unknown handler of a `request_id` listed here waits for its promise: the payout's job runs until then. */
  readonly holdUnknown = new Map<string, Promise<void>>();
  /** The `request_id`s whose unknown handler has been called. */
  readonly unknownCalled: string[] = [];

  @OnPayoutSent()
  onSent(result: PayoutRunResult): void {
    if (this.starveOnSentMs > 0) {
      starveEventLoop(this.starveOnSentMs);
      this.starveOnSentMs = 0;
    }
    if (this.failSent > 0) {
      this.failSent -= 1;
      throw new Error('the ledger is away');
    }
    this.sent.push(result);
  }

  @OnPayoutRefused()
  onRefused(result: PayoutRunResult): void {
    this.refused.push(result);
  }

  @OnPayoutOutcomeUnknown()
  async onUnknown(result: PayoutRunResult): Promise<void> {
    this.unknownCalled.push(result.requestId);
    await this.holdUnknown.get(result.requestId);
    if (this.failUnknown > 0) {
      this.failUnknown -= 1;
      throw new Error('the ledger is away');
    }
    this.unknown.push(result);
  }

  @OnPayoutRunCompleted()
  onCompleted(summary: PayoutRunSummary): void {
    this.completed.push(summary);
  }
}

export interface RunsApp {
  readonly app: INestApplicationContext;
  readonly runs: PayoutRunsService;
  readonly results: RecordedResults;
  readonly logger: RecordingLogger;
  /**
   * Resolves once the job of each of `requestIds` has completed. Its handlers run before BullMQ completes it, and a
   * decision on an unknown outcome whose job has not ended answers `'busy'`: a spec decides after this.
   */
  readonly untilJobsCompleted: (requestIds: readonly string[]) => Promise<true>;
}

/** An app with one PayoutsModule registration against `baseUrl` and its payout runs. */
export async function startRunsApp(
  baseUrl: string,
  options: PayoutRunsOptions,
  payoutsOptions: Pick<PayoutsModuleOptions, 'telemetry'> = {},
): Promise<RunsApp> {
  @Module({
    imports: [
      PayoutsModule.forRoot({
        baseUrl,
        apiKey: API_KEY,
        accessToken: ACCESS_TOKEN,
        timeoutMs: 5000,
        notifications: false,
        ...payoutsOptions,
      }),
      PayoutRunsModule.forRoot(options),
    ],
    providers: [RecordedResults],
  })
  class AppModule {}
  const logger = new RecordingLogger();
  const app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
  const runs = app.get<PayoutRunsService>(getPayoutRunsToken(options.account));
  return {
    app,
    runs,
    results: app.get(RecordedResults),
    logger,
    untilJobsCompleted: (requestIds) =>
      eventually(
        async () => {
          const states = await Promise.all(requestIds.map((id) => runs.queue.getJobState(payoutJobId(id))));
          return states.every((state) => state === 'completed') ? true : undefined;
        },
        20_000,
        `the jobs of ${requestIds.join(', ')} completed`,
      ),
  };
}

/**
 * Makes `user` a Redis user of the runs queue under `prefix` that may read all of it and write all of it but its jobs'
 * hashes: the payouts' records, the lists of jobs by state, the events and an idle worker's keys. BullMQ's retry of a
 * job is then refused (NOPERM) before it changes anything: a real Redis failure between a decision and its job.
 */
export async function userWithoutJobWrites(
  admin: Redis,
  user: string,
  password: string,
  prefix: string,
): Promise<void> {
  const queueKey = `${prefix}:payout-runs`;
  const states = ['wait', 'active', 'paused', 'completed', 'failed', 'delayed', 'prioritized', 'waiting-children'];
  const writable = ['runs:*', 'meta', 'events', 'marker', 'stalled', 'stalled-check', 'limiter', 'id', 'pc', ...states];
  await admin.call(
    'ACL',
    'SETUSER',
    user,
    'reset',
    'on',
    `>${password}`,
    ...writable.map((key) => `~${queueKey}:${key}`),
    `%R~${queueKey}:*`,
    '+@all',
  );
}

/**
 * Makes each decision through `runs`, as `ops@example.com`, with a Redis user of `userWithoutJobWrites()`: each is
 * recorded, and `resolveUnknown()` rejects as its job is not queued again.
 */
export async function decideWithoutQueueingJobs(
  runs: PayoutRunsService,
  decisions: readonly (readonly [requestId: string, decision: 'sent' | 'absent'])[],
): Promise<void> {
  for (const [requestId, decision] of decisions) {
    const failure = await runs
      .resolveUnknown(requestId, decision, { by: 'ops@example.com' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PayoutRunResolveError);
    expect(failure).toMatchObject({ requestId, decision, recorded: 'yes' });
  }
}

/** What the worker's job check logs of a decision it finished, one not queued again by whoever made it. */
export function finishedByTheJobCheck(requestId: string, decision: 'sent' | 'absent'): string {
  return (
    `Payout ${requestId} of account 'default' was decided ${decision}, but its job had not been queued again (Redis ` +
    'failed between the two steps, or lost the job): queued now by the job check'
  );
}

/** A valid wallet payout with its own request_id and amount. */
export function payout(requestId: string, value = '10.00'): CreatePayoutRequest {
  return {
    payout_method: {
      type: 'wallet',
      payment_method: 'mpesa_ke',
      beneficiary: { name: 'Jane Doe', payout_method_details: { phone_number: '254712345678' } },
    },
    amount: { value, currency_code: 'KES' },
    country_code: 'KE',
    purpose: 'salary_payment',
    reference: `Payout ${requestId}`,
    request_id: requestId,
  };
}

/** What a loaded machine does to a worker: its event loop runs nothing for `ms`, timers and lock renewals included. */
export function starveEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Busy on purpose: nothing else of this process runs meanwhile.
  }
}
