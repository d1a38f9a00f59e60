export { PayoutRunsModule, type PayoutRunsAsyncOptions } from './payout-runs.module.js';
export type { PayoutRunsOptions, PayoutRunsRateLimit } from './payout-runs-options.js';
export type { PayoutLookupAnswer, PayoutLookupContext, PayoutReconcileOptions } from './payout-reconcile-options.js';
export type { PayoutReconcileCounts } from './payout-reconciler.js';
export { PayoutRunsService } from './payout-runs.service.js';
export type { PayoutEnqueueItem, PayoutEnqueueOptions, PayoutEnqueueResult } from './payout-run-enqueuer.js';
export type { PayoutResolveOutcome, PayoutRunProgress, UnknownPayout } from './payout-runs.service.js';
export {
  getPayoutLedgerToken,
  getPayoutRunsQueueToken,
  getPayoutRunsToken,
  InjectPayoutRuns,
} from './payout-runs.tokens.js';
export { payoutRunsQueueName } from './payout-runs-queue-name.js';
export { payoutJobId, type PayoutJobData } from './payout-job.js';
export {
  OnPayoutOutcomeUnknown,
  OnPayoutRefused,
  OnPayoutRunCompleted,
  OnPayoutRunProgress,
  OnPayoutSent,
  type PayoutRunHandlerOptions,
} from './payout-run-handler.decorators.js';
export type {
  PayoutResolution,
  PayoutRunCounts,
  PayoutRunError,
  PayoutRunOutcome,
  PayoutRunProgressReport,
  PayoutRunResult,
  PayoutRunSummary,
} from './payout-run-results.js';
