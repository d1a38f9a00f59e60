import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type ImportGraph, readImportGraph } from './import-graph.js';
import { importRuleViolations, layerOf } from './import-rules.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('imports of lib/', () => {
  it('keep every layering rule', () => {
    const graph = readImportGraph(root);
    expect(graph.size).toBeGreaterThan(50);
    expect(importRuleViolations(graph)).toEqual([]);
  });

  it('put every folder of lib/ in the layer its role says', () => {
    expect(layerOf('lib/common/redacted-secret.ts')).toBe('leaf');
    expect(layerOf('lib/errors/payouts.error.ts')).toBe('leaf');
    expect(layerOf('lib/interfaces/notification-context.interface.ts')).toBe('leaf');
    expect(layerOf('lib/payouts.constants.ts')).toBe('leaf');
    expect(layerOf('lib/payouts/payouts.service.ts')).toBe('feature');
    expect(layerOf('lib/notifications/http/notification-receiver.ts')).toBe('feature');
    expect(layerOf('lib/config/payouts-config.ts')).toBe('wiring');
    expect(layerOf('lib/accounts/payouts-registry.ts')).toBe('wiring');
    expect(layerOf('lib/payouts.module.ts')).toBe('wiring');
    expect(layerOf('lib/redis/index.ts')).toBe('add-on');
    expect(layerOf('lib/queue/index.ts')).toBe('add-on');
    expect(layerOf('lib/payout-runs/index.ts')).toBe('add-on');
    expect(layerOf('lib/terminus/index.ts')).toBe('add-on');
    expect(layerOf('lib/postgres/index.ts')).toBe('add-on');
  });
});

describe('the import rules', () => {
  const check = (graph: Record<string, string[]>) =>
    importRuleViolations(new Map(Object.entries(graph)) as ImportGraph);

  it.each([
    [
      { 'lib/common/x.ts': ['lib/payouts/payouts.service.ts'] },
      'lib/common/x.ts -> lib/payouts/payouts.service.ts: a leaf imports only leaves',
    ],
    [
      { 'lib/payouts/a.ts': ['lib/notifications/b.ts'] },
      'lib/payouts/a.ts -> lib/notifications/b.ts: features never import each other',
    ],
    [
      { 'lib/notifications/a.ts': ['lib/config/payouts-config.ts'] },
      'lib/notifications/a.ts -> lib/config/payouts-config.ts: a feature never imports the wiring',
    ],
    [
      { 'lib/payouts.module.ts': ['lib/redis/index.ts'] },
      'lib/payouts.module.ts -> lib/redis/index.ts: the core never imports an add-on',
    ],
    [
      { 'lib/payout-runs/a.ts': ['lib/queue/b.ts'] },
      'lib/payout-runs/a.ts -> lib/queue/b.ts: add-ons never import each other',
    ],
    [
      { 'lib/postgres/a.ts': ['lib/payout-runs/b.ts'] },
      'lib/postgres/a.ts -> lib/payout-runs/b.ts: add-ons never import each other',
    ],
    [{ 'lib/redis/a.ts': ['bullmq'] }, 'lib/redis/a.ts -> bullmq: only queue/ and payout-runs/ load bullmq'],
    [
      { 'lib/payouts/a.ts': ['@nestjs/core/injector/module.js'] },
      'lib/payouts/a.ts -> @nestjs/core/injector/module.js: deep import into Nest; use its root exports',
    ],
    [
      { 'lib/payouts/a.ts': ['class-validator'] },
      'lib/payouts/a.ts -> class-validator: import class-validator and class-transformer through lib/common/class-*-files.ts',
    ],
    [
      { 'lib/notifications/a.ts': ['class-transformer/cjs/index.js'] },
      'lib/notifications/a.ts -> class-transformer/cjs/index.js: import class-validator and class-transformer through lib/common/class-*-files.ts',
    ],
  ])('report a broken rule: %j', (graph, expected) => {
    expect(check(graph)).toContain(expected);
  });

  it('report an optional peer reachable from the main entry point, however indirectly', () => {
    expect(
      check({
        'lib/index.ts': ['lib/payouts.module.ts'],
        'lib/payouts.module.ts': ['lib/payouts/payouts.service.ts'],
        'lib/payouts/payouts.service.ts': ['ioredis'],
      }),
    ).toEqual([
      'lib/payouts/payouts.service.ts -> ioredis: reachable from lib/index.ts, which must load without optional add-ons',
    ]);
  });

  it('let the command line load an add-on command, and nothing else of the core', () => {
    expect(check({ 'lib/cli.ts': ['lib/queue/cli/queue-command.ts'] })).toEqual([]);
    expect(check({ 'lib/payouts.module.ts': ['lib/queue/index.ts'] })).toHaveLength(1);
  });

  it('let an add-on use the core and its optional peer', () => {
    expect(check({ 'lib/redis/store.ts': ['lib/index.ts', 'ioredis'], 'lib/index.ts': [] })).toEqual([]);
  });
});
