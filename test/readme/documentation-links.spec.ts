import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS, headingAnchor, headingAnchors, linkTargets, readDocument, ROOT } from './documentation.js';

/** What is wrong with a relative link of `document`, or undefined when it leads somewhere that exists. */
function brokenLink(document: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#');
  if (path.startsWith('/')) return 'an absolute path, which GitHub reads from the site root';
  const file = path === '' ? document : normalize(join(dirname(document), path));
  if (file.startsWith('..')) return 'outside the repository';
  if (!existsSync(join(ROOT, file))) return `${file} does not exist`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith('.md') || statSync(join(ROOT, file)).isDirectory()) return `an anchor into ${file}`;
  return headingAnchors(readDocument(file)).has(anchor) ? undefined : `${file} has no heading #${anchor}`;
}

describe('links between the README and docs/', () => {
  it('names anchors as GitHub does', () => {
    expect(headingAnchor('Queue mode (BullMQ)')).toBe('queue-mode-bullmq');
    expect(headingAnchor('Exposing payouts over HTTP: `PayoutsExceptionFilter`')).toBe(
      'exposing-payouts-over-http-payoutsexceptionfilter',
    );
    expect(headingAnchor('Dead letters: list and replay')).toBe('dead-letters-list-and-replay');
    expect(headingAnchor('An SDK bootstrap for Node 20')).toBe('an-sdk-bootstrap-for-node-20');
    expect([
      ...headingAnchors('# Limits\n\n```sh\n# not a heading\n```\n\n## Payout runs\n\n### Payout runs\n'),
    ]).toEqual(['limits', 'payout-runs', 'payout-runs-1']);
  });

  it.each(DOCUMENTS)('every relative link and anchor of %s resolves', (document) => {
    const targets = linkTargets(readDocument(document)).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
    const broken = targets.flatMap((target) => {
      const problem = brokenLink(document, target);
      return problem === undefined ? [] : [`${target}: ${problem}`];
    });

    expect(targets.length).toBeGreaterThan(0);
    expect(broken).toEqual([]);
  });

  it('the README links every guide of docs/, and each guide links to another page', () => {
    const guides = DOCUMENTS.filter((document) => document !== 'README.md');
    const fromReadme = new Set(linkTargets(readDocument('README.md')).map((target) => target.split('#')[0]));
    const linksElsewhere = (guide: string) =>
      linkTargets(readDocument(guide)).some((target) => /^[^#:]+\.md(#|$)/.test(target));

    expect(guides.filter((guide) => !fromReadme.has(guide))).toEqual([]);
    expect(guides.filter((guide) => !linksElsewhere(guide))).toEqual([]);
  });

  it('has a guide for each task', () => {
    expect(DOCUMENTS).toEqual(
      expect.arrayContaining(
        [
          'payouts',
          'notifications',
          'several-instances',
          'queue-mode',
          'payout-runs',
          'accounts',
          'observability',
          'testing',
          'production',
          'troubleshooting',
          'options',
        ].map((guide) => `docs/${guide}.md`),
      ),
    );
  });
});
