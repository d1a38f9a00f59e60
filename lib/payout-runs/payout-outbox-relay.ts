import type { PackageLogger } from '../common/package-logger.js';
import { throttledErrorLog } from '../common/throttled-error-log.js';
import { withDeadline } from '../common/with-deadline.js';
import type { PayoutLedgerOutbox, PayoutPendingRow, PayoutPendingSubscription } from '../index.js';

/** Payouts moved per transaction of the relay. */
const BATCH = 500;
/**
 * The backstop: how often the relay looks for pending payouts without being woken (its listening connection down, a
 * wake-up lost), and how soon it tries again after PostgreSQL or Redis failed.
 */
const POLL_MS = 1000;
/**
 * How long handing one batch to the queue may take before the relay gives up on it (Redis away): its transaction is
 * rolled back, the payouts stay pending and are moved on a later try. Jobs that reach Redis anyway are found there by
 * their id when they are added again.
 */
const ADD_TIMEOUT_MS = 10_000;

/**
 * Moves the payouts that committed transactions wrote as `pending` onto the run's queue: woken by the ledger's
 * notification when such a transaction commits, and by a poll as a backstop. Several relays, in one process or many,
 * share the work: each batch is held by one of them only.
 */
export class PayoutOutboxRelay {
  private subscription: PayoutPendingSubscription | undefined;
  private listening: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  /** A wake-up came while draining: drain once more after. */
  private again = false;
  private stopped = false;
  private readonly logError: (error: Error) => void;

  constructor(
    private readonly outbox: PayoutLedgerOutbox,
    private readonly add: (payouts: readonly PayoutPendingRow[]) => Promise<unknown>,
    logger: PackageLogger,
    what: string,
  ) {
    this.logError = throttledErrorLog(logger, `Outbox relay of ${what}`);
  }

  start(): void {
    this.listen();
    this.schedule();
    this.wake();
  }

  /** Drains now, or right after the drain under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Stops listening and polling, and waits for the batch under way to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.draining;
    await this.listening;
    await this.subscription?.close().catch(() => undefined);
    this.subscription = undefined;
  }

  private async drain(): Promise<void> {
    try {
      // A full batch may mean more: go on until a short one.
      while (!this.stopped && (await this.outbox.movePending(BATCH, (payouts) => this.hand(payouts))) === BATCH);
    } catch (error) {
      this.logError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private async hand(payouts: readonly PayoutPendingRow[]): Promise<void> {
    await withDeadline(
      this.add(payouts),
      ADD_TIMEOUT_MS,
      () => new Error(`the queue did not take ${payouts.length} pending payouts within ${ADD_TIMEOUT_MS} ms`),
    );
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      // Listening again here too, after the connection it held failed.
      if (!this.subscription && !this.listening) this.listen();
      this.wake();
      this.schedule();
    }, POLL_MS);
    this.timer.unref();
  }

  private listen(): void {
    this.listening = this.outbox
      .listenPending(
        () => this.wake(),
        (error) => {
          this.subscription = undefined;
          this.logError(error);
        },
      )
      .then(
        async (subscription) => {
          if (this.stopped) await subscription.close().catch(() => undefined);
          else this.subscription = subscription;
        },
        (error: unknown) => this.logError(error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => (this.listening = undefined));
  }
}
