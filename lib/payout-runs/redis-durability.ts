import type { PackageLogger } from '../common/package-logger.js';
import { RedisEvictionPolicyError } from '../index.js';

/** How durably Redis keeps what payout runs write; `undefined` where Redis does not say. */
export interface RedisDurability {
  /** `maxmemory-policy`, from `INFO`. */
  readonly evictionPolicy: string | undefined;
  /** `appendonly`, from `INFO`'s `aof_enabled`. */
  readonly appendOnly: boolean | undefined;
  /** `appendfsync`, from `CONFIG GET`, which a managed Redis may rename, disable or deny. */
  readonly appendFsync: string | undefined;
}

/** The calls of an ioredis client (bullmq 5, and bullmq 6's default) or a node-redis one (bullmq 6) used here. */
interface SettingsClient {
  info(): Promise<string>;
  config?(action: 'GET', name: string): Promise<unknown>;
  configGet?(name: string): Promise<Record<string, string> | undefined>;
}

const SETTING_VALUE = /^[a-z][a-z-]{0,39}$/;

/**
 * Reads the settings by `INFO`, which a managed Redis answers when `CONFIG` is renamed or denied; `appendfsync`, which
 * `INFO` leaves out, by `CONFIG GET` where it is allowed.
 */
export async function readRedisDurability(client: unknown): Promise<RedisDurability> {
  const redis = client as SettingsClient;
  const info = new Map<string, string>();
  for (const line of (await redis.info()).split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) info.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  const aof = info.get('aof_enabled');
  return {
    evictionPolicy: settingValue(info.get('maxmemory_policy')),
    appendOnly: aof === '1' ? true : aof === '0' ? false : undefined,
    appendFsync: await configValue(redis, 'appendfsync'),
  };
}

async function configValue(client: SettingsClient, name: string): Promise<string | undefined> {
  try {
    if (typeof client.config === 'function') {
      const reply = await client.config('GET', name);
      return Array.isArray(reply) && reply[0] === name ? settingValue(reply[1]) : undefined;
    }
    if (typeof client.configGet === 'function') return settingValue((await client.configGet(name))?.[name]);
  } catch {
    // CONFIG renamed, disabled or denied by an ACL: the setting is reported as unknown.
  }
  return undefined;
}

/** A setting's value as Redis spells them; anything else is not trusted into a log line. */
function settingValue(value: unknown): string | undefined {
  return typeof value === 'string' && SETTING_VALUE.test(value) ? value : undefined;
}

/**
 * Logs what Redis keeps at boot, with a warning naming the setting to change when a restart of Redis could lose
 * payouts' records. Throws `RedisEvictionPolicyError` when Redis may evict them and `accepted` does not name its policy.
 */
export function checkRedisDurability(
  durability: RedisDurability,
  accepted: string | undefined,
  queueName: string,
  logger: Pick<PackageLogger, 'log' | 'warn'>,
): void {
  const policy = durability.evictionPolicy ?? 'unknown';
  if (policy !== 'noeviction' && policy !== accepted) throw new RedisEvictionPolicyError(policy, queueName);
  const appendOnly = durability.appendOnly === undefined ? 'unknown' : durability.appendOnly ? 'yes' : 'no';
  const appendFsync = durability.appendFsync ?? 'unknown (CONFIG GET is not available to this connection)';
  const where = `Redis of queue ${queueName}`;
  logger.log(`${where}: maxmemory-policy ${policy}, appendonly ${appendOnly}, appendfsync ${appendFsync}`);
  if (policy !== 'noeviction') {
    logger.warn(
      `${where}: maxmemory-policy ${policy} is accepted by acceptEvictionPolicy, though an evicted payout's record ` +
        'could be sent twice; set maxmemory-policy noeviction to rule it out',
    );
  }
  if (durability.appendOnly === false) {
    logger.warn(
      `${where}: appendonly is no: a restart of Redis loses what was written since its last snapshot, and a payout ` +
        'whose "sending" marker is lost could be sent twice; set appendonly yes (with appendfsync everysec or always)',
    );
  } else if (durability.appendFsync === 'no') {
    logger.warn(
      `${where}: appendfsync is no: the operating system decides when the log reaches the disk, and a crash loses ` +
        'what it had not written; set appendfsync everysec or always',
    );
  }
}
