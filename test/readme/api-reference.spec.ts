import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNodeProcess } from '../node-process.js';
import { linkTargets, ROOT } from './documentation.js';

/*
 * docs/api/ is generated from the built package's type declarations by `npm run docs:api`; this regenerates it into a
 * temporary folder and holds the checked-in pages to it, so a change of an export or of its documentation comment
 * comes with its reference. Needs `npm run build`.
 */

const CHECKED_IN = join(ROOT, 'docs', 'api');
const read = (folder: string) =>
  Object.fromEntries(
    readdirSync(folder)
      .sort()
      .map((name) => [name, readFileSync(join(folder, name), 'utf8')]),
  );

describe('the API reference in docs/api/', () => {
  const regenerated = mkdtempSync(join(tmpdir(), 'payouts-api-reference-'));
  afterAll(() => rmSync(regenerated, { recursive: true, force: true }));

  it('is what npm run docs:api makes of the built package (run it after changing an export)', async () => {
    const run = await runNodeProcess([join(ROOT, 'scripts', 'api-reference.mjs'), regenerated], {
      cwd: ROOT,
      timeoutMs: 60_000,
    });
    expect([run.code, run.stderr]).toEqual([0, '']);

    const pages = read(regenerated);
    expect(Object.keys(pages)).toEqual(
      expect.arrayContaining(['README.md', 'nestjs-payouts.md', 'testing.md', 'payout-runs.md']),
    );
    expect(read(CHECKED_IN)).toEqual(pages);
  });

  it('lists the exports that no guide shows, such as getPayoutRunsToken and PaymentMethodEventType', () => {
    expect(readFileSync(join(CHECKED_IN, 'payout-runs.md'), 'utf8')).toMatch(/^## getPayoutRunsToken$/m);
    expect(readFileSync(join(CHECKED_IN, 'nestjs-payouts.md'), 'utf8')).toMatch(/^## PaymentMethodEventType$/m);
  });

  it('documents no private member: every comment in a declaration is followed by what it documents', () => {
    const orphans = Object.entries(read(CHECKED_IN)).flatMap(([page, text]) =>
      [...text.matchAll(/\*\/\n\s*(\/\*\*|\}\n)/g)].map(
        (match) => `${page}: ${text.slice(match.index - 80, match.index)}`,
      ),
    );
    expect(orphans).toEqual([]);
    expect(readFileSync(join(CHECKED_IN, 'payout-runs.md'), 'utf8')).toContain('enqueue(items: readonly');
  });

  it('is linked from the README', () => {
    expect(linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8'))).toContain('docs/api/README.md');
  });
});
