import { createRequire } from 'node:module';

/**
 * The optional package that queue mode needs and cannot find, or `undefined` when all are there: `bullmq`, and
 * `ioredis` when BullMQ is to open its own connections from connection options. bullmq 6 loads ioredis only when it
 * connects, and without it the queue retries for ever, pinning a CPU with nothing in the log that helps; bullmq 5
 * brings its own. Both are looked up from where BullMQ looks them up, without loading them.
 */
export function missingBullMqPeer(opensOwnConnections: boolean): 'bullmq' | 'ioredis' | undefined {
  const bullmq = resolved(createRequire(import.meta.url), 'bullmq');
  if (bullmq === undefined) return 'bullmq';
  if (opensOwnConnections && resolved(createRequire(bullmq), 'ioredis') === undefined) return 'ioredis';
  return undefined;
}

/** Connection options, from which BullMQ opens its connections, as opposed to a client the app made itself. */
export function isConnectionOptions(connection: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(connection);
  return prototype === Object.prototype || prototype === null;
}

function resolved(require: NodeJS.Require, name: string): string | undefined {
  try {
    return require.resolve(name);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}
