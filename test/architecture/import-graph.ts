import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';

/** Each source file of `lib/` (as `lib/...` paths) with what it imports: relative imports resolved, others as written. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const IMPORT =
  /^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|\bimport\('([^']+)'\)|\brequire\('([^']+)'\)/gm;

export function readImportGraph(root: string): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(join(root, 'lib'))) {
    const path = relative(root, file).split('\\').join('/');
    const imports = [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((match) => {
      const specifier = (match[1] ?? match[2] ?? match[3] ?? match[4])!;
      if (!specifier.startsWith('.')) return specifier;
      return posix.join(posix.dirname(path), specifier).replace(/\.js$/, '.ts');
    });
    graph.set(path, imports);
  }
  return graph;
}

function* sourceFiles(folder: string): Generator<string> {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}
