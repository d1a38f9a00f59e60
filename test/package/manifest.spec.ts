import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | Record<string, string>>;
  bin: Record<string, string>;
  repository?: { type: string; url: string };
  homepage?: string;
  bugs?: { url: string };
  dependencies?: Record<string, string>;
  peerDependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Bare module specifiers (`'@scope/name/sub'`, `'name'`) imported by a file, reduced to package names. */
function importedPackages(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const specifiers = [...source.matchAll(/(?:from|import)\s*\(?\s*'([^'.][^']*)'/g)].map((match) => match[1]!);
  return specifiers
    .filter((specifier) => !specifier.startsWith('node:') && !builtinModules.includes(specifier))
    .map((specifier) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

describe('package manifest', () => {
  it('declares every package that lib/ imports as a dependency or peer dependency', () => {
    const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies)]);
    const undeclared = sourceFiles(join(root, 'lib')).flatMap((file) =>
      importedPackages(file)
        .filter((name) => !declared.has(name))
        .map((name) => `${relative(root, file)} imports ${name}`),
    );
    expect(undeclared).toEqual([]);
  });

  it('says where the source, the documentation and the issue tracker are, as npm shows them', () => {
    const repository = 'https://github.com/nestjs-payouts/nestjs-payouts';
    expect(manifest.repository).toEqual({ type: 'git', url: `git+${repository}.git` });
    expect(manifest.homepage).toBe(`${repository}#readme`);
    expect(manifest.bugs).toEqual({ url: `${repository}/issues` });
  });

  it('keeps Nest 11 and Nest 12 in the peer ranges', () => {
    for (const name of ['@nestjs/common', '@nestjs/core']) {
      expect(manifest.peerDependencies[name]).toMatch(/\^11\.[\d.]+ \|\| \^12\.[\d.]+/);
    }
  });

  it('points every export and bin at a built file', () => {
    const targets = Object.values(manifest.exports).flatMap((target) =>
      typeof target === 'string' ? [target] : Object.values(target),
    );
    const missing = [...targets, ...Object.values(manifest.bin)].filter((target) => !existsSync(join(root, target)));
    expect(targets.length).toBeGreaterThan(3);
    expect(missing).toEqual([]);
  });
});
