import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markedBlock, typescriptBlocks } from '../readme/documentation.js';
import { createScratchProject, packTarball, runCommand } from './scratch-project.js';

/*
 * The test-runner set-ups of docs/testing.md, each in a new project outside the repository with the guide's own
 * tests as pasted: the packed package, the packages they import (links to this repository's copies, so no network),
 * the guide's configuration file, then the guide's command. Needs `npm run build`.
 */

const GUIDE = 'docs/testing.md';
const RUN_LIMIT_MS = 180_000;

/** The guide's test files: its TypeScript blocks that import Vitest's test functions. */
const guideTests = typescriptBlocks()
  .filter(({ document, code }) => document === GUIDE && code.includes("from 'vitest';"))
  .map(({ code }) => code);
const testCount = guideTests.reduce((count, code) => count + code.match(/^\s*it\(/gm)!.length, 0);

/** What every project of the guide installs, beside the package and its test runner. */
const APP_PACKAGES = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/testing',
  '@nestjs/platform-express',
  '@nestjs/axios',
  'axios',
  'rxjs',
  'reflect-metadata',
  'class-validator',
  'class-transformer',
];

function testFiles(imports: string): Record<string, string> {
  return Object.fromEntries(
    guideTests.map((code, index) => [`test/guide-${index + 1}.spec.ts`, code.replace("from 'vitest';", imports)]),
  );
}

/** The guide says both set-ups work in a CommonJS project (as the Nest CLI makes them) and in an ES module one. */
const PACKAGE_JSONS = {
  'a CommonJS project': JSON.stringify({ name: 'docs-project', version: '1.0.0', private: true }),
  'an ES module project': JSON.stringify({ name: 'docs-project', version: '1.0.0', private: true, type: 'module' }),
};
type ModuleSystem = keyof typeof PACKAGE_JSONS;
const MODULE_SYSTEMS = Object.keys(PACKAGE_JSONS) as ModuleSystem[];

describe('the test-runner set-ups of docs/testing.md, in new projects', () => {
  let pack: ReturnType<typeof packTarball>;
  const projects: string[] = [];

  beforeAll(() => {
    pack = packTarball();
  }, 60_000);
  afterAll(() => {
    for (const created of projects) rmSync(created, { recursive: true, force: true });
    pack?.remove();
  });

  function newProject(packages: string[], files: Record<string, string>): string {
    const created = createScratchProject({ tarball: pack.tarball, packages: [...APP_PACKAGES, ...packages], files });
    projects.push(created);
    return created;
  }

  it('has test files that use decorators, and counts their tests', () => {
    expect(guideTests.length).toBeGreaterThanOrEqual(3);
    expect(guideTests.filter((code) => code.includes('@Injectable()')).length).toBeGreaterThanOrEqual(2);
    expect(testCount).toBeGreaterThanOrEqual(5);
  });

  it(
    'Vitest fails on the decorated test files without the configuration',
    async () => {
      const vitest = newProject(['vitest'], {
        'package.json': PACKAGE_JSONS['a CommonJS project'],
        ...testFiles("from 'vitest';"),
      });

      const run = await runCommand(vitest, markedBlock(GUIDE, 'vitest-command').code.trim(), RUN_LIMIT_MS);
      expect(run.code).toBe(1);
      expect(run.output).toContain('SyntaxError: Invalid or unexpected token');
    },
    RUN_LIMIT_MS + 60_000,
  );

  it.each(MODULE_SYSTEMS)(
    'Vitest runs every test with the configuration, in %s',
    async (moduleSystem) => {
      const vitest = newProject(['vitest'], {
        'package.json': PACKAGE_JSONS[moduleSystem],
        'vitest.config.ts': markedBlock(GUIDE, 'vitest-config').code,
        ...testFiles("from 'vitest';"),
      });

      const run = await runCommand(vitest, markedBlock(GUIDE, 'vitest-command').code.trim(), RUN_LIMIT_MS);
      expect(run.output).toMatch(new RegExp(`Tests +${testCount} passed \\(${testCount}\\)`));
      expect(run.code).toBe(0);
    },
    RUN_LIMIT_MS + 60_000,
  );

  it.each(MODULE_SYSTEMS)(
    'Jest runs every test as ES modules with the configuration, in %s',
    async (moduleSystem) => {
      const jest = newProject(['jest', '@jest/globals', '@swc/jest', '@swc/core'], {
        'package.json': PACKAGE_JSONS[moduleSystem],
        'jest.config.json': markedBlock(GUIDE, 'jest-config').code,
        ...testFiles("from '@jest/globals';"),
      });

      const run = await runCommand(jest, markedBlock(GUIDE, 'jest-command').code.trim(), RUN_LIMIT_MS);
      expect(run.output).toContain(`Tests:       ${testCount} passed, ${testCount} total`);
      expect(run.code).toBe(0);
    },
    RUN_LIMIT_MS + 60_000,
  );
});
