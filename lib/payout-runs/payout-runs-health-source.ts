import { pingQueue, queueFigures, workerState } from '../common/bullmq-queue-health.js';
import type { PayoutsHealthSource } from '../index.js';
import type { PayoutReconciler } from './payout-reconciler.js';
import type { PayoutRunsService } from './payout-runs.service.js';
import type { PayoutRunsWorker } from './payout-runs-worker.js';

/** What health checks ask of an account's payout runs: a `PING` on the queue's connection, and its figures. */
export function payoutRunsHealthSource(
  runs: PayoutRunsService,
  worker: PayoutRunsWorker,
  reconciler: PayoutReconciler,
): PayoutsHealthSource {
  return {
    component: 'payout-runs',
    ping: () => pingQueue(runs.queue),
    figures: async () => {
      const [figures, unknown] = await Promise.all([
        queueFigures(runs.queue, worker.running),
        runs.store.unknown(0, 1),
      ]);
      return { ...figures, parked: unknown.total, reconciled: { ...reconciler.counts } };
    },
    worker: () => workerState(worker.running),
  };
}

/**
 * The ledger's own health source where it is not Redis (a durable ledger, such as PostgreSQL): a round trip over a
 * connection of its pool. `null` with the Redis store, which the queue's `PING` already covers.
 */
export function payoutLedgerHealthSource(runs: PayoutRunsService): PayoutsHealthSource | null {
  const { store } = runs;
  if (!store.durable || !store.ping) return null;
  return { component: 'payout-ledger', ping: () => store.ping!() };
}
