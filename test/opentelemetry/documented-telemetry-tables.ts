import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const guide = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'observability.md'), 'utf8');

/**
 * The table of docs/observability.md under `heading` (from `## OpenTelemetry` on): each row's first cell, and the
 * names in `column`.
 */
export function documentedTable(heading: string, column: number): Map<string, string[]> {
  const section = guide.slice(guide.indexOf('## OpenTelemetry'));
  const table = section.slice(section.indexOf(heading)).split('\n\n')[1]!;
  const rows = table.split('\n').slice(2);
  return new Map(
    rows.map((row) => {
      const cells = row.split(' | ');
      const name = /`([^`]+)`/.exec(cells[0]!)![1]!.replace(/ <.*$/, ' ');
      const names = [...cells[column]!.matchAll(/`([a-z_.]+)`/g)].map((match) => match[1]!);
      return [name, names.filter((attribute) => attribute.includes('.'))];
    }),
  );
}
