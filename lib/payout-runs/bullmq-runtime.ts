import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';

/** The runtime of `bullmq`, as payout runs use it. */
export type BullMQRuntime = typeof BullMQ;

const INSTALL = 'npm install bullmq ioredis';

/**
 * Loads `bullmq` when this entry point is loaded, and fails with the install command when it, or the `ioredis`
 * that bullmq 6 needs to connect from options, is missing: a static import would only say "Cannot find package".
 */
function loadBullMQ(): BullMQRuntime {
  const require = createRequire(import.meta.url);
  let runtime: BullMQRuntime;
  try {
    runtime = require('bullmq') as BullMQRuntime;
  } catch (error) {
    throw missing('bullmq', error);
  }
  const major = Number((require('bullmq/package.json') as { version: string }).version.split('.')[0]);
  if (major >= 6) {
    try {
      require.resolve('ioredis');
    } catch (error) {
      throw missing('ioredis', error);
    }
  }
  return runtime;
}

function missing(name: string, error: unknown): unknown {
  if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') return error;
  return new Error(
    `nestjs-payouts/payout-runs needs the ${name} package (bullmq, and ioredis with bullmq 6): ${INSTALL}`,
    { cause: error },
  );
}

export const bullmq: BullMQRuntime = loadBullMQ();
