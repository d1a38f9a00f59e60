/**
 * The Lua scripts that move a payout from state to state, each in one step, so that the counts of its run, the list of
 * unknown outcomes and the "sending" marker always agree, whichever worker dies between two steps. KEYS are the
 * payout's hash, its run's counts and the list of unknown outcomes, which share a hash slot on a Redis Cluster (the
 * prefix's hash tag).
 */

/**
 * Records each new `request_id` of a chunk as queued; for a known one, says whether the body is the same. One call per
 * chunk of an enqueue rather than per payout. KEYS[1] is the run's counts; the payouts' hashes come in ARGV (key,
 * fingerprint, request_id for each), in the same hash slot as the run's key (the prefix's hash tag on a Cluster).
 * Replies only for the known ones (position from 1, 'already' or 'conflict', state, run): a chunk of new payouts, the
 * usual case, gets an empty reply.
 */
export const CLAIM = `
local replies = {}
local added = 0
local position = 0
for i = 4, #ARGV, 3 do
  position = position + 1
  local key, fp, rid = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local existing = redis.call('HMGET', key, 'fp', 'state', 'run')
  if existing[1] then
    local verdict = 'conflict'
    if existing[1] == fp then verdict = 'already' end
    replies[#replies + 1] = position
    replies[#replies + 1] = verdict
    replies[#replies + 1] = existing[2]
    replies[#replies + 1] = existing[3]
  else
    redis.call('HSET', key, 'rid', rid, 'fp', fp, 'run', ARGV[1], 'state', 'queued', 'attempt', 0, 'since', ARGV[3])
    redis.call('PEXPIRE', key, ARGV[2])
    added = added + 1
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[1], 'queued', added)
  redis.call('HINCRBY', KEYS[1], 'total', added)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return replies
`;

/**
 * Writes the "sending" marker before a request leaves: only from queued or retrying. A marker already there means a
 * worker began to send and no outcome was recorded (it died, or lost its lock): `interrupted`, unless ARGV[3] is '1'
 * (the provider dedupes `request_id`), which sends again under the same id. Says which request this is, and a person's
 * decision that led to it. A payout sent is settled: a decision sent on it no longer awaits its job, this one.
 */
export const BEGIN = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'missing'} end
if state == 'queued' or state == 'retrying' or (state == 'sending' and ARGV[3] == '1') then
  redis.call('HSET', KEYS[1], 'state', 'sending', 'token', ARGV[1], 'since', ARGV[2])
  local attempt = redis.call('HINCRBY', KEYS[1], 'attempt', 1)
  if state ~= 'sending' then
    redis.call('HINCRBY', KEYS[2], state, -1)
    redis.call('HINCRBY', KEYS[2], 'sending', 1)
  end
  return {'send', tostring(attempt), redis.call('HGET', KEYS[1], 'resolution') or ''}
end
if state == 'sending' then return {'interrupted'} end
if state == 'sent' then redis.call('HDEL', KEYS[1], 'awaitsjob') end
return {'settled', state}
`;

/**
 * Replaces the marker with the outcome, if the marker is still this worker's (ARGV[1], or '*' to park any marker).
 * Says 'completed' to the one payout that leaves its run with nothing pending.
 */
export const SETTLE = `
local current = redis.call('HMGET', KEYS[1], 'state', 'token')
if current[1] ~= 'sending' or (ARGV[1] ~= '*' and current[2] ~= ARGV[1]) then return {'lost', current[1] or ''} end
local to = ARGV[2]
redis.call('HSET', KEYS[1], 'state', to, 'outcome', ARGV[3], 'since', ARGV[4], 'handled', '[]')
redis.call('HDEL', KEYS[1], 'token')
redis.call('HINCRBY', KEYS[2], 'sending', -1)
redis.call('HINCRBY', KEYS[2], to, 1)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
if to == 'unknown' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[6]) end
if to ~= 'retrying' then
  local counts = redis.call('HMGET', KEYS[2], 'queued', 'sending', 'retrying')
  local pending = (tonumber(counts[1]) or 0) + (tonumber(counts[2]) or 0) + (tonumber(counts[3]) or 0)
  if pending <= 0 and redis.call('HSETNX', KEYS[2], 'completedAt', ARGV[4]) == 1 then
    redis.call('HSET', KEYS[1], 'completes', '1')
    return {'completed', to}
  end
end
return {'settled', to}
`;

/**
 * A person's decision on an unknown outcome: `sent` (final) or `absent` (queued again, to send once more). The record
 * keeps its expiry, renewed when the payout settles again. The payout joins KEYS[4], the decisions whose job is checked
 * later (see `DECISIONS_AWAITING_JOBS`); one decided sent awaits its job until `BEGIN` finds it settled.
 */
export const RESOLVE = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 'missing' end
if state ~= 'unknown' then return state end
local to = 'queued'
if ARGV[1] == 'sent' then to = 'sent' end
redis.call('ZREM', KEYS[3], ARGV[5])
redis.call('HINCRBY', KEYS[2], 'unknown', -1)
redis.call('HINCRBY', KEYS[2], to, 1)
redis.call('HSET', KEYS[1], 'state', to, 'resolution', ARGV[2], 'since', ARGV[3], 'handled', '[]')
redis.call('HDEL', KEYS[1], 'completes')
if to == 'sent' then redis.call('HSET', KEYS[1], 'awaitsjob', '1') end
redis.call('ZADD', KEYS[4], ARGV[3], KEYS[1])
return 'resolved'
`;

/**
 * The payouts decided at ARGV[1] ms or earlier whose job has not run since, oldest first, up to ARGV[2]: the
 * `request_id` and the decision of each, one after the other. KEYS[1] holds the keys of their records (in the same hash
 * slot, by the prefix's hash tag). Decided absent, a payout stays queued until its job begins to send it; decided sent,
 * it awaits its job until `BEGIN` finds it settled. Any other (sent since, its job run, or expired) leaves KEYS[1].
 */
export const DECISIONS_AWAITING_JOBS = `
local found = {}
for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])) do
  local fields = redis.call('HMGET', key, 'state', 'rid', 'awaitsjob')
  if fields[1] == 'queued' then
    found[#found + 1] = fields[2]
    found[#found + 1] = 'absent'
  elseif fields[1] == 'sent' and fields[3] then
    found[#found + 1] = fields[2]
    found[#found + 1] = 'sent'
  else
    redis.call('ZREM', KEYS[1], key)
  end
end
return found
`;

/**
 * Pauses the account's queue for ARGV[1] ms, unless it is paused for longer already: a pause is only ever extended,
 * so a `503` without `Retry-After` never cuts short the `Retry-After` of an earlier `429`, whichever worker got each.
 * KEYS[1] is BullMQ's limiter key; ARGV[2], above any limit's `max`, holds every worker until the key expires, as
 * BullMQ's own `rateLimit()` does. Returns the pause in force, in ms.
 */
export const PAUSE = `
local ms = tonumber(ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left > ms then ms = left end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ms)
return ms
`;
