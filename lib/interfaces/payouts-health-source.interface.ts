/** The parts of the package that hold a connection (Redis, or the payout ledger's database), as health checks name them. */
export type PayoutsHealthComponent = 'dedupe-store' | 'notifications-queue' | 'payout-runs' | 'payout-ledger';

/** What a queue reports to a health check: its figures, never a connection detail. */
export interface PayoutsQueueFigures {
  /** Jobs waiting (in a paused queue too), delayed or prioritised: not yet taken by a worker. */
  readonly backlog: number;
  /** Jobs that failed for good (the dead-letter set). */
  readonly failed: number;
  /** Payouts parked because their outcome is unknown (payout runs only). */
  readonly parked?: number;
  /** What this instance's sweeps decided on parked payouts, by answer (payout runs only). */
  readonly reconciled?: Readonly<Record<'created' | 'absent' | 'unknown' | 'failed' | 'givenUp', number>>;
  /** The queue is paused (`queue.pause()`): no worker takes a job. */
  readonly paused: boolean;
  /** How long a rate-limit pause (a `429`, or the limiter) still holds, in ms; 0 for none. */
  readonly rateLimitedForMs: number;
  /** This instance's worker: `undefined` on an instance that runs none. */
  readonly worker?: PayoutsWorkerState;
}

/** This instance's worker of a queue. */
export interface PayoutsWorkerState {
  readonly running: boolean;
  readonly paused: boolean;
}

/**
 * The seam health checks use (`nestjs-payouts/terminus`): a part of the package that holds a Redis connection,
 * provided under `getPayoutsHealthSourceToken(component, account)` (`null` where the account has no such part).
 */
export interface PayoutsHealthSource {
  readonly component: PayoutsHealthComponent;
  /** Sends `PING` over the connection the part already holds (never a new one); rejects when Redis does not answer. */
  ping(): Promise<void>;
  /** A queue's figures; a store has none. */
  figures?(): Promise<PayoutsQueueFigures>;
  /** This instance's worker of a queue, asking nothing of Redis; `undefined` where it runs none. */
  worker?(): PayoutsWorkerState | undefined;
}
