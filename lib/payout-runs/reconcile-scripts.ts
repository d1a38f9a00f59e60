/**
 * The scripts of the reconcile sweep. Its lock lets one instance at a time sweep an account's unknown outcomes: one
 * key holding the sweeping instance's token, with a lease that the sweep renews as it goes. Each lock script touches
 * that one key, compares the token and acts in one step, so an instance whose lease ran out can neither extend nor
 * drop another's lock.
 */

/** Takes the lock for ARGV[1] for ARGV[2] ms, unless another holds it: 1 when taken. */
export const ACQUIRE_SWEEP = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`;

/** Extends the lease, only while the lock is still ARGV[1]'s: 1 when extended. */
export const RENEW_SWEEP = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/** Drops the lock, only if it is still ARGV[1]'s. */
export const RELEASE_SWEEP = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Records on the payout's hash (KEYS[1]) that the sweep gave up on it while parked since ARGV[1]: 1 for the one call
 * that records it, 0 once recorded, or when the payout is no longer parked since then. Kept as that time rather than a
 * flag, so that a payout resolved as absent and parked again is given up on again, once.
 */
export const GIVE_UP = `
local current = redis.call('HMGET', KEYS[1], 'state', 'since', 'givenUp')
if current[1] ~= 'unknown' or current[2] ~= ARGV[1] or current[3] == ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'givenUp', ARGV[1])
return 1
`;
