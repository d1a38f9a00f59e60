import { PayoutsError } from './payouts.error.js';

/**
 * Thrown while the application boots when the Redis of payout runs may evict keys (its `maxmemory-policy` is not
 * `noeviction`) and the `acceptEvictionPolicy` option does not name that policy: an evicted record is a payout whose
 * "sending" marker is gone, which could be sent twice. No worker of the account was started and nothing was sent;
 * booting again is safe once Redis's policy is `noeviction`, or the option accepts the policy.
 */
export class RedisEvictionPolicyError extends PayoutsError {
  constructor(
    /** Redis's `maxmemory-policy`, or `'unknown'` when `INFO` does not say. */
    readonly policy: string,
    queueName: string,
  ) {
    const found =
      policy === 'unknown'
        ? `Redis's maxmemory-policy could not be read (INFO has no maxmemory_policy field)`
        : `Redis's maxmemory-policy is ${policy}, which may evict a payout's record`;
    super(
      `The worker of queue ${queueName} does not start: ${found}, and a payout whose "sending" marker is evicted ` +
        `could be sent twice. Set maxmemory-policy noeviction on Redis, or accept this policy with the ` +
        `PayoutRunsModule option acceptEvictionPolicy: '${policy}'.`,
    );
  }
}
