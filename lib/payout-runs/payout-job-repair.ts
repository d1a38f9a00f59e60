import { endsWithin } from '../common/ends-within.js';
import type { PackageLogger } from '../common/package-logger.js';
import { printable } from '../common/printable.js';
import type { CreatePayoutRequest } from '../index.js';
import { payoutJobId } from './payout-job.js';
import type { PayoutResolution } from './payout-run-results.js';
import type { PayoutRunsService } from './payout-runs.service.js';

/** Payouts checked per page. */
const PAGE = 500;

/**
 * With a durable ledger, the ledger outlives the queue's jobs: Redis restarted without its last second of writes, or
 * flushed, can lose the job of a payout the ledger still has queued, sending or retrying, which nothing would then
 * send or park. Every `lockDurationMs`, on instances that run a worker, each such payout unchanged for at least that
 * long whose job is missing gets its job again, from the request the ledger kept. The job finds what the ledger says:
 * a payout queued or retrying is sent, one marked sending is parked as unknown, never sent again. Adding a job that
 * exists changes nothing, so instances repairing at once add each job once.
 *
 * A payout queued by a decision `absent` whose job ended before it (Redis failed between the decision and queueing
 * the job again, and no one made the decision again) is finished the same way, as `resolveUnknown()` finishes it: the
 * payout is sent once more, whichever process decided and whether it still runs.
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
      `The check of the ledger's payouts of account '${this.runs.account}' for missing queue jobs did not end within ` +
        `shutdownTimeoutMs (${timeoutMs} ms): it is left to stop with the process; each worker checks every ` +
        'lockDurationMs',
    );
  }

  /** One pass, unless one runs already; never rejects. */
  repair(): Promise<void> {
    this.repairing ??= this.repairOnce()
      .catch((error: unknown) => {
        // A pass left behind by the shutdown fails once the queue closes: the shutdown said so already.
        if (this.timer === undefined) return;
        this.logger.warn(`Could not check the queue jobs of the ledger's payouts: ${(error as Error).message}`);
      })
      .finally(() => {
        this.repairing = undefined;
      });
    return this.repairing;
  }

  private async repairOnce(): Promise<void> {
    const { store, queue } = this.runs;
    let after = '';
    for (;;) {
      if (this.timer === undefined) return;
      const page = await store.unsettled!(this.everyMs, after, PAGE);
      if (page.length === 0) return;
      const jobs = await Promise.all(page.map((payout) => queue.getJob(payoutJobId(payout.requestId))));
      const missing = page.filter((_, index) => !jobs[index]);
      // A job queued again loses its end time: one still ended ran before the payout's state was written.
      const ended = page.filter(({ state }, index) => state === 'queued' && jobs[index]?.finishedOn !== undefined);
      if (missing.length > 0) {
        await this.runs.addJobs(
          missing.map(({ request, runId }) => ({ request: request as unknown as CreatePayoutRequest, runId })),
        );
        this.logger.warn(
          `${missing.length} payout(s) of account '${this.runs.account}' had no queue job (Redis lost it); ` +
            'added again from the ledger: each one marked sending is parked as unknown, not sent again',
        );
      }
      for (const { requestId } of ended) await this.finishDecision(requestId);
      after = page[page.length - 1]!.requestId;
    }
  }

  /** Queues the job of a payout decided absent whose job was not queued again; any other queued payout is left. */
  private async finishDecision(requestId: string): Promise<void> {
    const record = await this.runs.store.read(requestId);
    if (record?.state !== 'queued' || record.resolution === undefined) return;
    const { decision } = JSON.parse(record.resolution) as PayoutResolution;
    // Finished as the same call again would finish it (logged as resolved, and counted); unless, meanwhile, another
    // call did, or the job was taken up.
    if (decision !== 'absent' || (await this.runs.resolveUnknown(requestId, 'absent')) !== 'resolved') return;
    this.logger.warn(
      `Payout ${printable(requestId)} of run ${printable(record.runId)} was decided absent, but its job had not ` +
        'been queued again (Redis failed between the two steps): queued now by the job repair',
    );
  }
}
