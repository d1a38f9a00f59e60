import type { ImportGraph } from './import-graph.js';

/**
 * The layers of `lib/`, from the bottom up. Leaves import only leaves; a feature imports leaves and itself, never
 * another feature nor the wiring; the wiring (module, providers, config, entry points) sees every feature; an add-on
 * may use the core, and the core never reaches an add-on.
 */
export type Layer = 'leaf' | 'feature' | 'wiring' | 'add-on';

const FEATURES = ['payouts', 'notifications', 'simulator'];
const ADD_ONS = ['redis', 'queue', 'payout-runs', 'opentelemetry', 'terminus', 'postgres'];
/** The add-ons that may load BullMQ. */
const BULLMQ_ADD_ONS = ['queue', 'payout-runs'];
/** Packages that an add-on may need and the core must never load. */
const OPTIONAL_PEERS = /^(ioredis|redis|bullmq|pg|@opentelemetry\/.*|@nestjs\/terminus)$/;
/** The `nestjs-payouts` command, which is never imported. */
const CLI = 'lib/cli.ts';
/** Nest's root exports only: a deep import breaks on the next minor release. */
const NEST_DEEP_IMPORT = /^@nestjs\/[^/]+\/.+/;
/** class-validator and class-transformer load through the two files that pick their parts: their root indexes are slow. */
const VALIDATION_LIBRARY = /^class-(validator|transformer)(\/|$)/;
const VALIDATION_LIBRARY_FILES = ['lib/common/class-validator-files.ts', 'lib/common/class-transformer-files.ts'];

export function layerOf(file: string): Layer {
  const [, top = ''] = file.split('/');
  if (['common', 'errors', 'interfaces', 'payouts.constants.ts'].includes(top)) return 'leaf';
  if (FEATURES.includes(top)) return 'feature';
  if (ADD_ONS.includes(top)) return 'add-on';
  return 'wiring';
}

function featureOf(file: string): string {
  return file.split('/')[1]!;
}

/** Every broken rule, as `importer -> imported: why`; empty when the graph keeps them all. */
export function importRuleViolations(graph: ImportGraph): string[] {
  const violations: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      const why = violation(file, target);
      if (why) violations.push(`${file} -> ${target}: ${why}`);
    }
  }
  for (const entry of ['lib/index.ts', 'lib/testing/index.ts']) {
    for (const [file, target] of reachableImports(graph, entry)) {
      if (OPTIONAL_PEERS.test(target) || (target.startsWith('lib/') && layerOf(target) === 'add-on')) {
        violations.push(`${file} -> ${target}: reachable from ${entry}, which must load without optional add-ons`);
      }
    }
  }
  return violations;
}

function violation(file: string, target: string): string | undefined {
  if (NEST_DEEP_IMPORT.test(target)) return 'deep import into Nest; use its root exports';
  if (VALIDATION_LIBRARY.test(target) && !VALIDATION_LIBRARY_FILES.includes(file)) {
    return 'import class-validator and class-transformer through lib/common/class-*-files.ts';
  }
  if (target === 'bullmq' && !BULLMQ_ADD_ONS.includes(featureOf(file)))
    return 'only queue/ and payout-runs/ load bullmq';
  if (!target.startsWith('lib/')) return undefined;
  const from = layerOf(file);
  const to = layerOf(target);
  if (from === 'add-on' && to === 'add-on' && featureOf(file) !== featureOf(target)) {
    return 'add-ons never import each other';
  }
  if (from === 'leaf' && to !== 'leaf') return 'a leaf imports only leaves';
  if (from === 'feature' && to === 'feature' && featureOf(file) !== featureOf(target)) {
    return 'features never import each other';
  }
  if (from === 'feature' && to !== 'leaf' && to !== 'feature') return `a feature never imports the ${to}`;
  // The command line is an entry point of its own: it loads an add-on's command when asked, by a dynamic import.
  if (from !== 'add-on' && to === 'add-on' && file !== CLI) return 'the core never imports an add-on';
  return undefined;
}

/** `[importer, imported]` for every import reachable from `entry` through files of `lib/`. */
function reachableImports(graph: ImportGraph, entry: string): [string, string][] {
  const found: [string, string][] = [];
  const seen = new Set<string>([entry]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const target of graph.get(file) ?? []) {
      found.push([file, target]);
      if (graph.has(target) && !seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return found;
}
