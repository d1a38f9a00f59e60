import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type NotificationsConfig, resolveNotificationsConfig } from '../../lib/notifications/notifications-config.js';
import { resolveReconcileOptions } from '../../lib/payout-runs/payout-reconcile-options.js';
import { resolvePayoutRunsOptions } from '../../lib/payout-runs/payout-runs-options.js';
import { resolvePayoutsClientConfig } from '../../lib/payouts/payouts-client-config.js';
import { resolvePayoutsQueueOptions } from '../../lib/queue/payouts-queue-options.js';
import { resolveRedisDedupeStoreOptions } from '../../lib/redis/redis-notification-dedupe-store-options.js';
import { resolvePayoutsHealthOptions } from '../../lib/terminus/payouts-health-options.js';
import { readDocument, ROOT } from './documentation.js';

/**
 * The lists of known option names in the code, as each options reader declares them with `optionKeys<…>()('a', …)`
 * (the compiler holds each list to its interface): docs/options.md must name every one, so that an option added to
 * the code without its line in the reference fails here.
 */
function knownOptionLists(): { file: string; keys: string[] }[] {
  const lib = join(ROOT, 'lib');
  return readdirSync(lib, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => {
      const source = readFileSync(join(lib, file), 'utf8');
      return [...source.matchAll(/optionKeys<[\s\S]*?>\(\)\(([^)]*)\)/g)].map((match) => ({
        file: relative(ROOT, join(lib, file)),
        keys: [...match[1]!.matchAll(/'([^']+)'/g)].map((key) => key[1]!),
      }));
    });
}

const reference = readDocument('docs/options.md');

/** The options the reference's tables name in their first column: `retries.maxRetries`, `httpAgent`, … */
const documented = new Set(
  reference
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split(' | ')[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)),
);

describe('docs/options.md', () => {
  const lists = knownOptionLists();

  it('finds the lists of known options in the code', () => {
    expect(lists.length).toBeGreaterThanOrEqual(15);
    expect(lists.flatMap(({ keys }) => keys)).toEqual(expect.arrayContaining(['baseUrl', 'leaseMs', 'rateLimit']));
  });

  it.each(lists.map(({ file, keys }) => [file, keys.join(', '), keys] as const))(
    'names every option of %s (%s) in a table row of its own',
    (_file, _names, keys) => {
      // A row names an option by its last segment (`retries.maxRetries`) or a list element's (`value[].label`).
      const named = (key: string) => [...documented].some((option) => option === key || option.endsWith(`.${key}`));

      expect(keys.filter((key) => !named(key))).toEqual([]);
    },
  );

  it('gives each option row a default', () => {
    const rows = reference.split('\n').filter((line) => line.startsWith('| `'));

    expect(rows.length).toBeGreaterThan(70);
    expect(rows.filter((row) => row.split(' | ')[1]!.trim() === '')).toEqual([]);
  });
});

/** The Default cell of the row naming `option` in the section `## <section>` of the reference. */
function documentedDefault(section: string, option: string): string {
  const start = reference.indexOf(`\n## ${section}\n`);
  const end = reference.indexOf('\n## ', start + 1);
  const row = reference
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .find((line) => line.startsWith(`| \`${option}\` |`));
  expect(row, `${section}: ${option}`).toBeDefined();
  return row!.split(' | ')[1]!;
}

const UNIT_MS: Record<string, number> = { s: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };

/** A default as written: a number in backticks (`30000`), or an amount of time (24 hours, 30 days). */
function milliseconds(cell: string): number | undefined {
  const literal = /`(\d+)`/.exec(cell);
  if (literal) return Number(literal[1]);
  const time = /^(\d+) (s|minutes|hours|days)\b/.exec(cell);
  return time ? Number(time[1]) * UNIT_MS[time[2]!]! : undefined;
}

describe("docs/options.md's defaults", () => {
  const client = resolvePayoutsClientConfig({ baseUrl: 'https://api.example.com', apiKey: 'k', accessToken: 't' });
  const notifications = resolveNotificationsConfig({ verification: 'none' }) as NotificationsConfig;
  const dedupe = notifications.dedupe as { ttlMs: number; maxEntries: number };
  const redis = resolveRedisDedupeStoreOptions();
  const queue = resolvePayoutsQueueOptions({ connection: {} });
  const runs = resolvePayoutRunsOptions({ connection: {}, rateLimit: false });
  const reconcile = resolveReconcileOptions({ lookup: () => 'unknown' })!;
  const health = resolvePayoutsHealthOptions();

  it.each<[string, string, number]>([
    ['Module options', 'timeoutMs', client.timeoutMs],
    ['Module options', 'maxResponseBytes', client.maxResponseBytes],
    ['Module options', 'retries.maxRetries', client.retry.maxRetries],
    ['Module options', 'retries.baseDelayMs', client.retry.baseDelayMs],
    ['Module options', 'retries.maxDelayMs', client.retry.maxDelayMs],
    ['Notification options', 'notifications.bodyLimitBytes', notifications.bodyLimitBytes],
    ['Notification options', 'notifications.handlerTimeoutMs', notifications.handlerTimeoutMs],
    ['Notification options', 'notifications.dedupe.ttlMs', dedupe.ttlMs],
    ['Notification options', 'notifications.dedupe.maxEntries', dedupe.maxEntries],
    ['Redis dedupe store', 'leaseMs', redis.leaseMs],
    ['Redis dedupe store', 'handledTtlMs', redis.handledTtlMs],
    ['Redis dedupe store', 'commandTimeoutMs', redis.commandTimeoutMs],
    ['Queue mode', 'attempts', queue.attempts],
    ['Queue mode', 'backoffMs', queue.backoffMs],
    ['Queue mode', 'retentionMs', queue.retentionMs],
    ['Queue mode', 'enqueueTimeoutMs', queue.enqueueTimeoutMs],
    ['Queue mode', 'concurrency', queue.concurrency],
    ['Queue mode', 'lockDurationMs', queue.lockDurationMs],
    ['Queue mode', 'shutdownTimeoutMs', queue.shutdownTimeoutMs],
    ['Payout runs', 'concurrency', runs.concurrency],
    ['Payout runs', 'dedupeWindowMs', runs.dedupeWindowMs],
    ['Payout runs', 'attempts', runs.attempts],
    ['Payout runs', 'backoffMs', runs.backoffMs],
    ['Payout runs', 'lockDurationMs', runs.lockDurationMs],
    ['Payout runs', 'shutdownTimeoutMs', runs.shutdownTimeoutMs],
    ['Payout runs', 'reconcile.settleAfterMs', reconcile.settleAfterMs],
    ['Payout runs', 'reconcile.sweepEveryMs', reconcile.sweepEveryMs],
    ['Payout runs', 'reconcile.giveUpAfterMs', reconcile.giveUpAfterMs],
    ['Payout runs', 'reconcile.lookupTimeoutMs', reconcile.lookupTimeoutMs],
    ['Health checks', 'timeoutMs', health.timeoutMs],
  ])('%s: %s is what the code uses', (section, option, actual) => {
    expect(milliseconds(documentedDefault(section, option))).toBe(actual);
  });

  it('names the prefixes the code uses', () => {
    expect(documentedDefault('Redis dedupe store', 'prefix')).toBe(`\`'${redis.prefix}'\``);
    expect(documentedDefault('Payout runs', 'prefix')).toBe(`\`'${runs.prefix}'\``);
  });
});
