import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDocument, ROOT } from './documentation.js';

/**
 * The lists of known option names in the code, as each options reader declares them with `optionKeys<…>()('a', …)`
 * (the compiler holds each list to its interface): docs/options.md must name every one, so that an option added to
 * the code without its line in the reference fails here.
 */
function knownOptionLists(): { file: string; keys: string[] }[] {
  const lib = join(ROOT, 'lib');
  return readdirSync(lib, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => {
      const source = readFileSync(join(lib, file), 'utf8');
      return [...source.matchAll(/optionKeys<[\s\S]*?>\(\)\(([^)]*)\)/g)].map((match) => ({
        file: relative(ROOT, join(lib, file)),
        keys: [...match[1]!.matchAll(/'([^']+)'/g)].map((key) => key[1]!),
      }));
    });
}

const reference = readDocument('docs/options.md');

/** The options the reference's tables name in their first column: `retries.maxRetries`, `httpAgent`, … */
const documented = new Set(
  reference
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split(' | ')[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)),
);

describe('docs/options.md', () => {
  const lists = knownOptionLists();

  it('finds the lists of known options in the code', () => {
    expect(lists.length).toBeGreaterThanOrEqual(15);
    expect(lists.flatMap(({ keys }) => keys)).toEqual(expect.arrayContaining(['baseUrl', 'leaseMs', 'rateLimit']));
  });

  it.each(lists.map(({ file, keys }) => [file, keys.join(', '), keys] as const))(
    'names every option of %s (%s) in a table row of its own',
    (_file, _names, keys) => {
      // A row names an option by its last segment (`retries.maxRetries`) or a list element's (`value[].label`).
      const named = (key: string) => [...documented].some((option) => option === key || option.endsWith(`.${key}`));

      expect(keys.filter((key) => !named(key))).toEqual([]);
    },
  );

  it('gives each option row a default', () => {
    const rows = reference.split('\n').filter((line) => line.startsWith('| `'));

    expect(rows.length).toBeGreaterThan(70);
    expect(rows.filter((row) => row.split(' | ')[1]!.trim() === '')).toEqual([]);
  });
});
