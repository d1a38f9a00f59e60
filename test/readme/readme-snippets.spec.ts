import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const snippets = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);

// Inside the package, so `nestjs-payouts` resolves to the built types through the package's own `exports`.
const workDir = mkdtempSync(join(root, '.readme-snippets-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('README code blocks', () => {
  it('has TypeScript examples to check', () => {
    expect(snippets.length).toBeGreaterThan(5);
  });

  it('all typecheck against the built package', () => {
    const files = snippets.map((code, index) => {
      const file = `snippet-${String(index + 1).padStart(2, '0')}.ts`;
      writeFileSync(join(workDir, file), `${code}\nexport {};\n`);
      return file;
    });
    writeFileSync(
      join(workDir, 'tsconfig.json'),
      JSON.stringify({
        extends: '../tsconfig.json',
        // Examples show a piece of an app, so names they declare for the reader may go unused;
        // no `paths`, so `nestjs-payouts` is the built package a user installs.
        compilerOptions: { rootDir: '.', paths: {}, noUnusedLocals: false, noUnusedParameters: false },
        include: files,
      }),
    );
    const tsc = join(root, 'node_modules', '.bin', 'tsc');
    let output = '';
    try {
      execFileSync(tsc, ['-p', join(workDir, 'tsconfig.json')], { encoding: 'utf8', timeout: 60_000 });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  });
});
