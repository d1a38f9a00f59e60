import { endsWithin } from '../common/ends-within.js';
import type { PackageLogger } from '../common/package-logger.js';
import { printable } from '../common/printable.js';
import type { CreatePayoutRequest } from '../index.js';
import { payoutJobId } from './payout-job.js';
import type { PayoutRunsService } from './payout-runs.service.js';

/** Payouts checked per page. */
const PAGE = 500;

/**
 * Every `lockDurationMs`, on instances that run a worker, finds the payouts that nothing would send, park or handle.
 *
 * A payout decided whose job ended before the decision (Redis failed between recording the decision and queueing the
 * job again, and no one made the decision again) is finished as `resolveUnknown()` finishes it, whichever process
 * decided and whether it still runs: decided `absent`, sent once more; decided `sent`, its sent handlers run. Any
 * ledger.
 *
 * With a durable ledger, the ledger outlives the queue's jobs: Redis restarted without its last second of writes, or
 * flushed, can lose the job of a payout the ledger still has queued, sending or retrying. Each such payout unchanged
 * for at least `lockDurationMs` whose job is missing gets its job again, from the request the ledger kept. The job
 * finds what the ledger says: a payout queued or retrying is sent, one marked sending is parked as unknown, never sent
 * again. Adding a job that exists changes nothing, so instances repairing at once add each job once.
 */
export class PayoutJobRepair {
  private timer: NodeJS.Timeout | undefined;
  private repairing: Promise<void> | undefined;

  constructor(
    private readonly runs: PayoutRunsService,
    private readonly everyMs: number,
    private readonly logger: PackageLogger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.repair(), this.everyMs);
  }

  /**
   * Stops checking, and waits for the pass under way up to `timeoutMs`: one waiting on a Redis that does not answer is
   * left to stop with the process (adding a job twice changes nothing, so a pass cut short harms nothing).
   */
  async stop(timeoutMs: number): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    if (await endsWithin(this.repairing, timeoutMs)) return;
    this.logger.warn(
      `The check of the payouts of account '${this.runs.account}' for queue jobs lost or not queued again did not ` +
        `end within shutdownTimeoutMs (${timeoutMs} ms): it is left to stop with the process; each worker checks ` +
        'every lockDurationMs',
    );
  }

  /** One pass, unless one runs already; never rejects. */
  repair(): Promise<void> {
    this.repairing ??= this.repairOnce()
      .catch((error: unknown) => {
        // A pass left behind by the shutdown fails once the queue closes: the shutdown said so already.
        if (this.timer === undefined) return;
        this.logger.warn(
          `Could not check the queue jobs of the payouts of account '${this.runs.account}': ${(error as Error).message}`,
        );
      })
      .finally(() => {
        this.repairing = undefined;
      });
    return this.repairing;
  }

  private async repairOnce(): Promise<void> {
    if (this.runs.store.unsettled) await this.addMissingJobs();
    await this.finishDecisions();
  }

  /** The payouts decided whose job ended before the decision: queued again, as the same call again would. */
  private async finishDecisions(): Promise<void> {
    const { store, queue, account } = this.runs;
    if (this.timer === undefined) return;
    const decided = await store.decisionsAwaitingJobs(this.everyMs, PAGE);
    const jobs = await Promise.all(decided.map(({ requestId }) => queue.getJob(payoutJobId(requestId))));
    for (const [index, { requestId, decision }] of decided.entries()) {
      if (this.timer === undefined) return;
      // A job queued again loses its end time: one still ended ran before the decision. A missing one was lost with
      // Redis's data: a durable ledger makes it again from the request it kept (one decided absent, still queued, was
      // made again just before, by `addMissingJobs`); the Redis store lost the record with it.
      const job = jobs[index];
      if (job ? job.finishedOn === undefined : !store.durable) continue;
      // Logged as resolved and counted, as a decision is; unless, meanwhile, another call queued the job.
      if ((await this.runs.resolveUnknown(requestId, decision)) !== 'resolved') continue;
      this.logger.warn(
        `Payout ${printable(requestId)} of account '${account}' was decided ${decision}, but its job had not been ` +
          'queued again (Redis failed between the two steps, or lost the job): queued now by the job check',
      );
    }
  }

  private async addMissingJobs(): Promise<void> {
    const { store, queue } = this.runs;
    let after = '';
    for (;;) {
      if (this.timer === undefined) return;
      const page = await store.unsettled!(this.everyMs, after, PAGE);
      const jobs = await Promise.all(page.map((payout) => queue.getJob(payoutJobId(payout.requestId))));
      const missing = page.filter((_, index) => !jobs[index]);
      if (missing.length > 0) {
        await this.runs.addJobs(
          missing.map(({ request, runId }) => ({ request: request as unknown as CreatePayoutRequest, runId })),
        );
        this.logger.warn(
          `${missing.length} payout(s) of account '${this.runs.account}' had no queue job (Redis lost it); ` +
            'added again from the ledger: each one marked sending is parked as unknown, not sent again',
        );
      }
      // A page short of the limit (or empty) is the last: payouts that became unsettled since are the next pass's.
      if (page.length < PAGE) return;
      after = page[page.length - 1]!.requestId;
    }
  }
}
