import { createHash } from 'node:crypto';

/** A Lua script and the SHA-1 that `EVALSHA` names it by. */
export interface RedisScript {
  readonly source: string;
  readonly sha1: string;
}

function script(source: string): RedisScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

/*
 * The values of a notification's key:
 * - `handled`: its handlers succeeded;
 * - `claim:<claim id>`: a delivery runs its handlers, expiring after the lease (as the previous release wrote it);
 * - `record:<record JSON>`: a delivery failed after some handlers succeeded, kept as long as a handled mark;
 * - `claim:<claim id>\n<lease end>\n<record JSON>`: a delivery runs the handlers that earlier ones left, its lease
 *   ending at the Redis server's time `<lease end>` (milliseconds); the key lasts as long as a handled mark, so that
 *   the record outlives a claim whose instance died. Where the ACL refuses `TIME` to the store's user, `<lease end>`
 *   is empty and the key expires after the lease, record and all.
 * A record's JSON never holds a raw line feed, so the first two line feeds separate the parts.
 */
export const HANDLED_VALUE = 'handled';
export const CLAIM_VALUE_PREFIX = 'claim:';
export const RECORD_VALUE_PREFIX = 'record:';
/** How a claim that found a record answers it: this, followed by the record's JSON. */
export const CLAIMED_WITH_RECORD_PREFIX = 'claimed\n';

/**
 * KEYS[1] the notification's key, ARGV[1] this delivery's claim value, ARGV[2] the lease in milliseconds, ARGV[3]
 * how long a handled mark lasts. Claims a free key with an expiry set by the server, or a key holding a record (or a
 * claim over a record whose lease has ended) and answers the record; else answers what holds it.
 */
const CLAIM_SOURCE = `local current = redis.call('GET', KEYS[1])
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 'claimed'
end
if current == '${HANDLED_VALUE}' then return 'handled' end
local ok, time = pcall(redis.call, 'TIME')
local now = nil
if ok then now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) end
local record
if string.sub(current, 1, ${RECORD_VALUE_PREFIX.length}) == '${RECORD_VALUE_PREFIX}' then
  record = string.sub(current, ${RECORD_VALUE_PREFIX.length + 1})
else
  local first = string.find(current, '\\n', 1, true)
  if not first then return 'in-progress' end
  local second = string.find(current, '\\n', first + 1, true)
  if not second then return 'in-progress' end
  local leaseEnd = tonumber(string.sub(current, first + 1, second - 1))
  if not leaseEnd or not now or now < leaseEnd then return 'in-progress' end
  record = string.sub(current, second + 1)
end
if now then
  redis.call('SET', KEYS[1], ARGV[1] .. '\\n' .. tostring(now + tonumber(ARGV[2])) .. '\\n' .. record, 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[1] .. '\\n\\n' .. record, 'PX', ARGV[2])
end
return 'claimed\\n' .. record`;
export const CLAIM_SCRIPT = script(CLAIM_SOURCE);

/**
 * The claim script with a look at KEYS[2] first, the key the previous release wrote for a dedupe key with `*`: a
 * notification it handled (or is handling, during a rolling upgrade) is not run again. One round trip where both keys
 * are on one server; a cluster, where they may be on two nodes, reads KEYS[2] with a `GET` of its own first.
 */
export const CLAIM_AFTER_PREVIOUS_KEY_SCRIPT = script(`local previous = redis.call('GET', KEYS[2])
if previous == '${HANDLED_VALUE}' then return 'handled' end
if previous and string.sub(previous, 1, ${CLAIM_VALUE_PREFIX.length}) == '${CLAIM_VALUE_PREFIX}' then return 'in-progress' end
${CLAIM_SOURCE}`);

/**
 * KEYS[1] the notification's key, ARGV[1] the releasing delivery's claim value, ARGV[2] the record to keep (empty:
 * the one the claim found, if any), ARGV[3] how long a record lasts. Compare-and-release: another delivery's claim, a
 * record, or a handled mark is left as it is.
 */
export const RELEASE_SCRIPT = script(`local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local head = current
local record = ''
local first = string.find(current, '\\n', 1, true)
if first then
  head = string.sub(current, 1, first - 1)
  local second = string.find(current, '\\n', first + 1, true)
  if second then record = string.sub(current, second + 1) end
end
if head ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then record = ARGV[2] end
if record == '' then return redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[1], '${RECORD_VALUE_PREFIX}' .. record, 'PX', ARGV[3])
return 1`);
