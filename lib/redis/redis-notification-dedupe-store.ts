import { type OnModuleInit } from '@nestjs/common';
import {
  type NotificationClaim,
  type NotificationDedupeStore,
  type NotificationHandlerRecord,
  type NotificationRecordedClaim,
  PayoutsConfigError,
  type PayoutsHealthSource,
  RedisDedupeStoreError,
  type RedisDedupeStoreOperation,
} from '../index.js';
import { readHandlerRecord } from '../common/notification-handler-record.js';
import {
  CLAIM_AFTER_PREVIOUS_KEY_SCRIPT,
  CLAIM_SCRIPT,
  CLAIM_VALUE_PREFIX,
  CLAIMED_WITH_RECORD_PREFIX,
  HANDLED_VALUE,
  RELEASE_SCRIPT,
  type RedisScript,
} from './dedupe-scripts.js';
import { type RedisClientLike, type RedisCommandSender, redisCommandSender } from './redis-client.js';
import {
  type RedisNotificationDedupeStoreOptions,
  resolveRedisDedupeStoreOptions,
  STORE_OWNER,
} from './redis-notification-dedupe-store-options.js';
import { withDeadline } from '../common/with-deadline.js';
import { PackageLogger } from '../common/package-logger.js';

const CLAIMS: readonly string[] = ['claimed', 'in-progress', 'handled'] satisfies NotificationClaim[];

/** What `SCAN MATCH`, `KEYS` and `PSUBSCRIBE` patterns read as wildcards or escapes. */
const GLOB_CHARACTERS = /[*?[\]\\]/g;
/** The same, to test for one (without the `g` flag, `test` keeps no state between calls). */
const GLOB_CHARACTER = /[*?[\]\\]/;

function percentEncoded(character: string): string {
  return `%${character.charCodeAt(0).toString(16).toUpperCase()}`;
}

/**
 * A dedupe store that several instances share, on Redis: one key per notification, `<prefix>n:<dedupe key>` (glob
 * characters encoded, see `keyOf`), holding `claim:<claim id>` while a delivery runs the handlers (expiring after the
 * lease) and then `handled` (expiring after `handledTtlMs`); after a failure in which some handlers succeeded, their
 * record (see `dedupe-scripts.ts`). Every operation is one command or script, so it is atomic, takes one round trip
 * and works on Redis Cluster (a claim of a key with `*` also reads the previous release's spelling of it: in its
 * script on one server, with a `GET` of its own first on a cluster); expiries and leases are measured by the server,
 * so the instances' clocks do not matter.
 *
 * It takes a client that is already connected, and never connects, quits or configures it.
 */
export class RedisNotificationDedupeStore implements NotificationDedupeStore, OnModuleInit {
  private readonly logger = new PackageLogger(RedisNotificationDedupeStore.name);
  readonly #redis: RedisCommandSender;
  readonly #prefix: string;
  readonly #leaseMs: string;
  readonly #handledTtlMs: string;
  readonly #commandTimeoutMs: number;
  /** What health checks ask: a `PING` on the client the store was given. */
  readonly health: PayoutsHealthSource = {
    component: 'dedupe-store',
    ping: async () => {
      await this.#redis.serverCommand(['PING']);
    },
  };

  constructor(client: RedisClientLike, options?: RedisNotificationDedupeStoreOptions) {
    const config = resolveRedisDedupeStoreOptions(options);
    const redis = redisCommandSender(client, config.commandTimeoutMs);
    if (!redis) {
      throw new PayoutsConfigError(
        'client',
        'a connected node-redis (v5 or later) or ioredis (5.3 or later) client',
        STORE_OWNER,
      );
    }
    this.#redis = redis;
    this.#prefix = config.prefix;
    this.#leaseMs = String(config.leaseMs);
    this.#handledTtlMs = String(config.handledTtlMs);
    this.#commandTimeoutMs = config.commandTimeoutMs;
  }

  /**
   * The Redis key that holds the state of the notification `dedupeKey`, its glob characters (`*`, `?`, `[`, `]`, `\`)
   * percent-encoded as the rest of the key is, so that a key used as a `SCAN MATCH` or `KEYS` pattern matches itself
   * alone. Only `*` can be in a dedupe key (the route encodes the others), and a `%` there always starts an encoding.
   */
  keyOf(dedupeKey: string): string {
    return `${this.#prefix}n:${dedupeKey.replace(GLOB_CHARACTERS, percentEncoded)}`;
  }

  /**
   * The key the previous release wrote for `dedupeKey`, with `*` as it is, when it differs from today's; read (never
   * written) by `claim`, so that a notification that release handled is still recognised within `handledTtlMs`.
   */
  #previousKeyOf(dedupeKey: string): string | undefined {
    // Only a glob character makes the two spellings differ: the usual key builds no second key to compare.
    return GLOB_CHARACTER.test(dedupeKey) ? `${this.#prefix}n:${dedupeKey}` : undefined;
  }

  /**
   * Warns when Redis may evict keys: an evicted claim or handled mark lets a re-send run the handlers again.
   * Many managed services refuse `CONFIG`; then nothing is said, as it is when Redis does not answer (every claim
   * that fails is logged).
   */
  async onModuleInit(): Promise<void> {
    let policy: string | undefined;
    try {
      const reply = await withDeadline(
        this.#redis.serverCommand(['CONFIG', 'GET', 'maxmemory-policy']),
        this.#commandTimeoutMs,
        () => new Error('no reply'),
      );
      policy = maxmemoryPolicyOf(reply);
    } catch {
      return;
    }
    if (policy !== undefined && policy !== 'noeviction') {
      this.logger.warn(
        `Redis maxmemory-policy is "${policy}": under memory pressure Redis may evict dedupe keys, and a re-send of ` +
          'a notification whose key was evicted runs its handlers again. Set maxmemory-policy to "noeviction".',
      );
    }
  }

  claim(key: string, claimId?: string): Promise<NotificationClaim> {
    return this.claimWithRecord(key, claimId).then(claimOf);
  }

  /**
   * Claims the key, and answers the record an earlier delivery left; one this version cannot read is left out, so
   * that every handler runs (as they would without a record).
   */
  async claimWithRecord(key: string, claimId?: string): Promise<NotificationRecordedClaim> {
    const redisKey = this.keyOf(key);
    const claimValue = CLAIM_VALUE_PREFIX + (claimId ?? '');
    let reply: string;
    try {
      reply = String(await this.#send('claim', this.#claimUnlessPreviouslyHeld(key, redisKey, claimValue)));
      if (!CLAIMS.includes(reply) && !reply.startsWith(CLAIMED_WITH_RECORD_PREFIX)) {
        throw new RedisDedupeStoreError('claim', 'error', 'unexpected reply from Redis');
      }
    } catch (error) {
      // A claim that timed out may still be applied later (queued by a client while offline, or just slow); the
      // release queued behind it on the same connection removes it, so the re-send does not wait for the lease.
      this.#release(redisKey, claimValue, '').catch(() => undefined);
      throw error;
    }
    if (!reply.startsWith(CLAIMED_WITH_RECORD_PREFIX)) return reply as NotificationClaim;
    const record = readHandlerRecord(parseJson(reply.slice(CLAIMED_WITH_RECORD_PREFIX.length)));
    return record ? { claim: 'claimed', record } : 'claimed';
  }

  /**
   * The claim script, after a look at the key of the previous release when it differs: a notification it handled
   * (or is handling, during a rolling upgrade) is not run again. On one server both keys go to one script, in one
   * round trip; on a cluster, where they may be on two nodes, the old key is read first with a `GET` of its own (both
   * within one `commandTimeoutMs`).
   */
  #claimUnlessPreviouslyHeld(key: string, redisKey: string, claimValue: string): Promise<unknown> {
    const previousKey = this.#previousKeyOf(key);
    const leaseMs = this.#leaseMs;
    const handledTtlMs = this.#handledTtlMs;
    // The usual key, without `*`, has no other spelling: the script alone.
    if (previousKey === undefined) return this.#runScript(CLAIM_SCRIPT, redisKey, claimValue, leaseMs, handledTtlMs);
    if (!this.#redis.cluster) {
      return this.#runScript(CLAIM_AFTER_PREVIOUS_KEY_SCRIPT, redisKey, claimValue, leaseMs, handledTtlMs, previousKey);
    }
    return this.#redis.keyCommand(previousKey, ['GET', previousKey]).then((previous) => {
      if (previous === HANDLED_VALUE) return 'handled';
      if (typeof previous === 'string' && previous.startsWith(CLAIM_VALUE_PREFIX)) return 'in-progress';
      return this.#runScript(CLAIM_SCRIPT, redisKey, claimValue, leaseMs, handledTtlMs);
    });
  }

  /** Marks the notification handled whatever holds its key, even after this delivery's claim expired. */
  async complete(key: string): Promise<void> {
    const redisKey = this.keyOf(key);
    const mark = this.#redis.keyCommand(redisKey, ['SET', redisKey, HANDLED_VALUE, 'PX', this.#handledTtlMs]);
    await this.#send('complete', mark);
  }

  /**
   * Drops this delivery's own claim only (compare-and-delete), never a later delivery's claim or a handled mark; a
   * claim that found a record leaves that record.
   */
  async release(key: string, claimId?: string): Promise<void> {
    const redisKey = this.keyOf(key);
    await this.#send('release', this.#release(redisKey, CLAIM_VALUE_PREFIX + (claimId ?? ''), ''));
  }

  /** Drops this delivery's own claim only, and keeps `record` for `handledTtlMs` in its place. */
  async releaseWithRecord(key: string, claimId: string | undefined, record: NotificationHandlerRecord): Promise<void> {
    const redisKey = this.keyOf(key);
    const claimValue = CLAIM_VALUE_PREFIX + (claimId ?? '');
    await this.#send('release', this.#release(redisKey, claimValue, JSON.stringify(record)));
  }

  #release(redisKey: string, claimValue: string, record: string): Promise<unknown> {
    return this.#runScript(RELEASE_SCRIPT, redisKey, claimValue, record, this.#handledTtlMs);
  }

  /** One operation within `commandTimeoutMs`; any failure becomes a `RedisDedupeStoreError`. */
  async #send(operation: RedisDedupeStoreOperation, pending: Promise<unknown>): Promise<unknown> {
    try {
      return await withDeadline(
        pending,
        this.#commandTimeoutMs,
        () => new RedisDedupeStoreError(operation, 'timeout', `no reply within ${this.#commandTimeoutMs} ms`),
      );
    } catch (error) {
      if (error instanceof RedisDedupeStoreError) throw error;
      throw new RedisDedupeStoreError(operation, 'error', messageOf(error), { cause: error });
    }
  }

  /**
   * `EVALSHA`, and `EVAL` when the server answers `NOSCRIPT` (its script cache was flushed, or it restarted), on
   * `redisKey` (and `secondKey`, on the same server) with the script's three arguments.
   */
  #runScript(
    script: RedisScript,
    redisKey: string,
    arg1: string,
    arg2: string,
    arg3: string,
    secondKey?: string,
  ): Promise<unknown> {
    const command = (name: string, scriptArg: string) =>
      secondKey === undefined
        ? [name, scriptArg, '1', redisKey, arg1, arg2, arg3]
        : [name, scriptArg, '2', redisKey, secondKey, arg1, arg2, arg3];
    return this.#redis.keyCommand(redisKey, command('EVALSHA', script.sha1)).catch((error: unknown) => {
      if (!messageOf(error).startsWith('NOSCRIPT')) throw error;
      return this.#redis.keyCommand(redisKey, command('EVAL', script.source));
    });
  }
}

function claimOf(claim: NotificationRecordedClaim): NotificationClaim {
  return typeof claim === 'string' ? claim : claim.claim;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `CONFIG GET` answers a flat array (RESP2) or a map, as an object or a `Map` depending on the client. */
function maxmemoryPolicyOf(reply: unknown): string | undefined {
  let policy: unknown;
  if (Array.isArray(reply)) policy = reply[1];
  else if (reply instanceof Map) policy = reply.get('maxmemory-policy');
  else if (typeof reply === 'object' && reply !== null) policy = (reply as Record<string, unknown>)['maxmemory-policy'];
  return policy === undefined || policy === null ? undefined : String(policy);
}
