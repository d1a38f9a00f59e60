import { stackOf } from '../common/error-stack.js';
import type { PackageLogger } from '../common/package-logger.js';
import { printable } from '../common/printable.js';
import type { PayoutRunHandler } from './payout-run-handlers.explorer.js';
import type { PayoutRunProgressReport } from './payout-run-results.js';
import type { PayoutRunProgress } from './payout-runs.service.js';

/**
 * Tells the `@OnPayoutRunProgress()` handlers how the runs this instance's worker takes part in are going: a run is
 * followed from the first of its payouts the worker takes, and its counts read every `intervalMs`, so that handlers
 * are called at most once per run per interval, only when the counts changed, and a last time once the run has
 * completed; then it is no longer followed. The counts are read from Redis, the run's whole, whichever worker sent.
 */
export class PayoutRunProgressReporter {
  /** The runs followed, each with the counts last reported. */
  readonly #followed = new Map<string, string | undefined>();
  #timer: NodeJS.Timeout | undefined;
  #reading = false;
  #closed = false;

  constructor(
    private readonly account: string,
    private readonly read: (runId: string) => Promise<PayoutRunProgress | undefined>,
    private readonly handlers: readonly PayoutRunHandler[],
    private readonly intervalMs: number,
    private readonly logger: PackageLogger,
  ) {}

  /** A payout of `runId` moved in this instance's worker: the run is followed until it completes. */
  moved(runId: string): void {
    if (this.#closed) return;
    if (!this.#followed.has(runId)) this.#followed.set(runId, undefined);
    // A report at most once per interval: the timer, not each payout, triggers them. Unref'd: it never keeps a
    // process alive on its own.
    this.#timer ??= setInterval(() => void this.report(), this.intervalMs).unref();
  }

  /** On shutdown: no more reports, even of the payouts the worker ends as it closes. */
  close(): void {
    this.#closed = true;
    this.#followed.clear();
    this.idle();
  }

  /** Nothing left to follow: the timer stops until a payout moves again. */
  private idle(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  private async report(): Promise<void> {
    // A slow Redis must not stack the readings up.
    if (this.#reading) return;
    this.#reading = true;
    try {
      // A Map iterates safely while its entries are deleted or updated, as reportRun() does.
      for (const [runId, reported] of this.#followed) await this.reportRun(runId, reported);
    } finally {
      this.#reading = false;
      if (this.#followed.size === 0) this.idle();
    }
  }

  private async reportRun(runId: string, reported: string | undefined): Promise<void> {
    let progress: PayoutRunProgress | undefined;
    try {
      progress = await this.read(runId);
    } catch {
      // Redis away: the worker logs that already; the next interval tries again.
      return;
    }
    if (!progress) {
      this.#followed.delete(runId);
      return;
    }
    const counts = JSON.stringify(progress.counts);
    if (progress.completedAt) this.#followed.delete(runId);
    else this.#followed.set(runId, counts);
    if (counts === reported && !progress.completedAt) return;
    const report: PayoutRunProgressReport = {
      account: this.account,
      runId,
      counts: progress.counts,
      completedAt: progress.completedAt,
    };
    const outcomes = await Promise.allSettled(this.handlers.map(async (handler) => handler.invoke(report)));
    outcomes.forEach((outcome, index) => {
      if (outcome.status === 'rejected') {
        this.logger.warn(
          `${this.handlers[index]!.name} failed on the progress of run ${printable(runId)}: ${stackOf(outcome.reason)}`,
        );
      }
    });
  }
}
