import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

/** Runs a snippet in a real Node process inside the package, so `nestjs-payouts` resolves through its own `exports`. */
function runNode(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 15_000 }).trim();
}

const listExports = `Object.keys(mod).filter((name) => name !== 'default').sort().join(',')`;

describe('the built package', () => {
  it('is imported by a Node ESM process from dist/', () => {
    const names = runNode([
      '--input-type=module',
      '-e',
      `import 'reflect-metadata'; const mod = await import('nestjs-payouts'); console.log(${listExports});`,
    ]).split(',');
    expect(names).toEqual(expect.arrayContaining(['PayoutsModule', 'PayoutsService', 'PayoutsError']));
  });

  it('is required by a CommonJS process, which gets the same exports', () => {
    const esm = runNode([
      '--input-type=module',
      '-e',
      `const mod = await import('nestjs-payouts'); console.log(${listExports});`,
    ]);
    const cjs = runNode([
      '--input-type=commonjs',
      '-e',
      `const mod = require('nestjs-payouts'); console.log(${listExports});`,
    ]);
    expect(cjs).toBe(esm);
    expect(cjs).toContain('PayoutsModule');
  });

  it('loads only the class-validator and class-transformer files it uses, not their root indexes', () => {
    // The root indexes load every decorator, libphonenumber-js and all of validator.js: most of what importing the
    // package would cost at start.
    const loaded = runNode([
      '--input-type=module',
      '-e',
      `import 'reflect-metadata'; import { createRequire } from 'node:module'; await import('nestjs-payouts');
       console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`,
    ]);
    const files = (JSON.parse(loaded) as string[]).map((file) => file.split('\\').join('/'));
    expect(files.filter((file) => file.includes('/node_modules/class-validator/')).length).toBeGreaterThan(10);
    expect(files.filter((file) => file.includes('/node_modules/class-transformer/')).length).toBeGreaterThan(2);
    expect(
      files.filter(
        (file) =>
          file.endsWith('/class-validator/cjs/index.js') ||
          file.endsWith('/class-transformer/cjs/index.js') ||
          file.includes('/node_modules/libphonenumber-js/'),
      ),
    ).toEqual([]);
  });

  it('serves the queue entry point to both module systems', () => {
    const esm = runNode([
      '--input-type=module',
      '-e',
      `const mod = await import('nestjs-payouts/queue'); console.log(${listExports});`,
    ]);
    const cjs = runNode([
      '--input-type=commonjs',
      '-e',
      `const mod = require('nestjs-payouts/queue'); console.log(${listExports});`,
    ]);
    expect(esm).toContain('payoutsQueue');
    expect(cjs).toBe(esm);
  });

  it('serves the testing entry point to both module systems', () => {
    const esm = runNode([
      '--input-type=module',
      '-e',
      `const mod = await import('nestjs-payouts/testing'); console.log(${listExports});`,
    ]);
    const cjs = runNode([
      '--input-type=commonjs',
      '-e',
      `const mod = require('nestjs-payouts/testing'); console.log(${listExports});`,
    ]);
    expect(esm.length).toBeGreaterThan(0);
    expect(cjs).toBe(esm);
  });

  it('is one file per entry point of package.json plus shared chunks, beside a declaration per source file', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { default: string }>;
      bin: Record<string, string>;
    };
    const entryPoints = [
      ...Object.values(manifest.exports).map((target) => (typeof target === 'string' ? target : target.default)),
      ...Object.values(manifest.bin),
    ]
      .filter((target) => target.endsWith('.js'))
      .map((target) => target.slice('./dist/'.length));
    const files = readdirSync(join(root, 'dist'), { recursive: true, encoding: 'utf8' });
    const scripts = files.filter((file) => file.endsWith('.js'));
    expect(scripts.filter((file) => !file.startsWith('chunks/')).sort()).toEqual(entryPoints.sort());
    expect(scripts.length).toBeLessThan(40);
    expect(files).toContain('payouts/payouts.service.d.ts');
  });

  it('shares one copy of each class between its entry points, so instanceof holds across them', () => {
    const verdicts = runNode([
      '--input-type=module',
      '-e',
      `import 'reflect-metadata';
      const { PayoutsError, PayoutValidationError } = await import('nestjs-payouts');
      const { FakePayoutsService } = await import('nestjs-payouts/testing');
      const error = await new FakePayoutsService().createPayout({}).catch((rejection) => rejection);
      console.log(error instanceof PayoutValidationError, error instanceof PayoutsError);`,
    ]);
    expect(verdicts).toBe('true true');
  });
});
