import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';
import { missingBullMqPeer } from '../common/bullmq-peers.js';

/** The runtime of `bullmq`, as payout runs use it. */
export type BullMQRuntime = typeof BullMQ;

/**
 * Loads `bullmq` when this entry point is loaded, and fails with the install command when it, or the `ioredis`
 * that bullmq 6 needs to connect from options, is missing: a static import would only say "Cannot find package".
 */
function loadBullMQ(): BullMQRuntime {
  const missing = missingBullMqPeer(true);
  if (missing !== undefined) {
    throw new Error(
      `nestjs-payouts/payout-runs needs the ${missing} package (bullmq, and ioredis with bullmq 6): ` +
        'npm install bullmq ioredis',
    );
  }
  return createRequire(import.meta.url)('bullmq') as BullMQRuntime;
}

export const bullmq: BullMQRuntime = loadBullMQ();
