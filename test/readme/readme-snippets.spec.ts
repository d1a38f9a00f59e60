import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DOCUMENTS, ROOT, typescriptBlocks } from './documentation.js';

const snippets = typescriptBlocks();

// Inside the package, so `nestjs-payouts` resolves to the built types through the package's own `exports`.
const workDir = mkdtempSync(join(ROOT, '.readme-snippets-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('code blocks of the README and docs/', () => {
  it('has TypeScript examples to check, in the README and in the guides', () => {
    expect(snippets.length).toBeGreaterThan(25);
    expect(snippets.filter(({ document }) => document === 'README.md').length).toBeGreaterThan(0);
    expect(new Set(snippets.map(({ document }) => document)).size).toBeGreaterThan(DOCUMENTS.length / 2);
  });

  it('all typecheck against the built package', () => {
    const files = snippets.map(({ document, index, code }) => {
      // Named after the document, so that an error says where the block is: docs-payouts-md-03.ts.
      const file = `${document.replace(/[^A-Za-z0-9]+/g, '-')}-${String(index).padStart(2, '0')}.ts`;
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
    const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
    let output = '';
    try {
      execFileSync(tsc, ['-p', join(workDir, 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  });
});
