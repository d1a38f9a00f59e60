import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's root, where README.md and docs/ live. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** The user's documentation: the README (the front page) and every guide in docs/, as paths from the root. */
export const DOCUMENTS: readonly string[] = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

export function readDocument(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

export interface CodeBlock {
  /** The document it is in, such as `docs/payouts.md`. */
  readonly document: string;
  /** Its place among the document's TypeScript blocks, from 1. */
  readonly index: number;
  readonly code: string;
}

/** Every ```ts block of the documentation, in document order. */
export function typescriptBlocks(): CodeBlock[] {
  return DOCUMENTS.flatMap((document) =>
    [...readDocument(document).matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match, index) => ({
      document,
      index: index + 1,
      code: match[1]!,
    })),
  );
}

/** The lines of a Markdown text that are not inside a fenced code block. */
export function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/**
 * The anchors GitHub gives a document's headings: the heading's text without its Markdown (link targets, backticks),
 * lowercased, with everything but letters, digits, `_`, `-` and spaces dropped and spaces turned into hyphens; a
 * repeated anchor gets `-1`, `-2`, … in order.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6} (.+?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const anchor = headingAnchor(heading);
    const repeats = seen.get(anchor) ?? 0;
    seen.set(anchor, repeats + 1);
    anchors.add(repeats === 0 ? anchor : `${anchor}-${repeats}`);
  }
  return anchors;
}

export function headingAnchor(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The targets of the inline links of a Markdown text, outside code blocks and code spans. */
export function linkTargets(markdown: string): string[] {
  return proseLines(markdown).flatMap((line) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!),
  );
}

export interface MarkedBlock {
  /** The fence's language, such as `ts`, `json` or `sh`. */
  readonly language: string;
  readonly code: string;
}

/**
 * The code block that a document marks `<!-- tested: <name> -->` (an HTML comment, which readers do not see) on the
 * line before its fence, blank lines allowed between: the blocks that tests run as a reader pastes them.
 */
export function markedBlock(document: string, name: string): MarkedBlock {
  const marker = `<!-- tested: ${name} -->`;
  const found = [...readDocument(document).matchAll(/^<!-- tested: (\S+) -->\n\s*^```(\w+)\n([\s\S]*?)^```$/gm)].filter(
    (match) => match[0].startsWith(marker),
  );
  if (found.length !== 1) throw new Error(`${document} has ${found.length} blocks marked ${marker}, instead of one`);
  return { language: found[0]![2]!, code: found[0]![3]! };
}

/** The names of the blocks a document marks `<!-- tested: <name> -->`. */
export function markedBlockNames(document: string): string[] {
  return [...readDocument(document).matchAll(/^<!-- tested: (\S+) -->$/gm)].map((match) => match[1]!);
}

/**
 * Compiles the TypeScript files written into `workDir` (a folder inside the repository, so that `nestjs-payouts`
 * resolves to the built package through its own `exports`, as in an application) with the project's settings, into
 * `workDir/dist`. Unused names are allowed: a snippet may declare what its guide uses further on.
 */
export function compileSnippets(workDir: string, include: string[], timeoutMs: number): void {
  writeFileSync(
    join(workDir, 'tsconfig.json'),
    JSON.stringify({
      extends: '../tsconfig.json',
      compilerOptions: {
        rootDir: '.',
        outDir: 'dist',
        noEmit: false,
        declaration: false,
        sourceMap: false,
        paths: {},
        noUnusedLocals: false,
        noUnusedParameters: false,
      },
      include,
      exclude: ['dist'],
    }),
  );
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(workDir, 'tsconfig.json')], {
    encoding: 'utf8',
    timeout: timeoutMs,
  });
}
