import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markedBlock } from '../readme/documentation.js';
import { createScratchProject, packTarball, runCommand } from './scratch-project.js';

/*
 * The README's quick start, as a reader follows it in an empty directory: the package.json that its commands make,
 * the packages its `npm install` lines name (links to this repository's copies, the packed tarball for the package
 * itself), its tsconfig.json and quickstart.ts as pasted, then its commands. Needs `npm run build`.
 */

const RUN_LIMIT_MS = 120_000;

/** The packages named by the `npm install` lines of a block, without their flags. */
function installedPackages(commands: string): string[] {
  return commands
    .split('\n')
    .filter((line) => line.startsWith('npm install '))
    .flatMap((line) => line.split(/\s+/).slice(2))
    .filter((word) => !word.startsWith('-'));
}

describe("the README's quick start, in a new project", () => {
  let pack: ReturnType<typeof packTarball>;
  let project: string;

  beforeAll(() => {
    const install = markedBlock('README.md', 'quick-start-install').code;
    // What `npm init -y && npm pkg set type=module` leaves in package.json that matters here.
    expect(install).toContain('npm pkg set type=module');
    pack = packTarball();
    project = createScratchProject({
      tarball: pack.tarball,
      packages: installedPackages(install).filter((name) => name !== 'nestjs-payouts'),
      files: {
        'package.json': JSON.stringify({ name: 'quick-start', version: '1.0.0', type: 'module' }),
        'tsconfig.json': markedBlock('README.md', 'quick-start-tsconfig').code,
        'quickstart.ts': markedBlock('README.md', 'quick-start').code,
      },
    });
  }, 120_000);
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
    pack?.remove();
  });

  it(
    'installs what it needs, compiles and prints what the README says',
    async () => {
      const install = markedBlock('README.md', 'quick-start-install').code;
      expect(installedPackages(install)).toEqual(expect.arrayContaining(['nestjs-payouts', 'typescript']));

      const [compile, run] = markedBlock('README.md', 'quick-start-run').code.trim().split('\n');
      const compiled = await runCommand(project, compile!, RUN_LIMIT_MS);
      expect(compiled).toEqual({ code: 0, output: '' });

      const ran = await runCommand(project, run!, RUN_LIMIT_MS);
      expect(ran.code).toBe(0);
      expect(ran.output).toMatch(/^payout: HTTP 201 \{[\s\S]*status: 'pending'/m);
      expect(ran.output).toMatch(/^handler: shopper \S+ saved \S+$/m);
      expect(ran.output).toMatch(/^notification acknowledged: true$/m);
      expect(ran.output).toContain('PAYMENT_METHOD_REMOVED');
    },
    2 * RUN_LIMIT_MS + 30_000,
  );
});
