import { createHash } from 'node:crypto';

/** A Lua script and the SHA-1 that `EVALSHA` names it by. */
export interface RedisScript {
  readonly source: string;
  readonly sha1: string;
}

function script(source: string): RedisScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

/** The value of a key whose notification was handled; a claim's value is `claim:<claim id>`, never this. */
export const HANDLED_VALUE = 'handled';
export const CLAIM_VALUE_PREFIX = 'claim:';

/**
 * KEYS[1] the notification's key, ARGV[1] this delivery's claim value, ARGV[2] the lease in milliseconds.
 * Claims a free key with an expiry set by the server, or answers what holds it.
 */
export const CLAIM_SCRIPT = script(`local current = redis.call('GET', KEYS[1])
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 'claimed'
end
if current == '${HANDLED_VALUE}' then return 'handled' end
return 'in-progress'`);

/**
 * KEYS[1] the notification's key, ARGV[1] the releasing delivery's claim value.
 * Compare-and-delete: another delivery's claim, or a handled mark, is left as it is.
 */
export const RELEASE_SCRIPT = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`);
