import type { Spread } from './stats.js';

/** Prints results as Markdown tables: readable in a terminal and pasted as-is into bench/README.md. */

export type Cell = string | number;

export function printTable(title: string, headers: readonly string[], rows: readonly (readonly Cell[])[]): void {
  // Rows may be shorter than the headers; missing cells print empty.
  const text = rows.map((row) =>
    headers.map((_, column) => {
      const cell = row[column] ?? '';
      return typeof cell === 'number' ? formatNumber(cell) : cell;
    }),
  );
  const widths = headers.map((header, column) => Math.max(header.length, ...text.map((row) => row[column]!.length)));
  // Text columns align left, figures right (Markdown `---:`).
  const numeric = headers.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === 'number'));
  const pad = (cell: string, column: number) =>
    numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!);
  const line = (cells: readonly string[]) => `| ${cells.map(pad).join(' | ')} |`;
  const dashes = widths.map((width, column) => (numeric[column] ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2)));
  const rule = `|${dashes.join('|')}|`;
  console.log(`\n### ${title}\n`);
  console.log([line(headers), rule, ...text.map(line)].join('\n'));
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '-';
  if (Number.isInteger(value)) return value.toString();
  if (Math.abs(value) >= 100) return Math.round(value).toString();
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}x` : '-';
}

/** `0.94x (0.90x–0.99x)`: the median of the per-round ratios, then the lowest and highest round. */
export function formatSpread(spread: Spread): string {
  return `${formatRatio(spread.median)} (${formatRatio(spread.min)}–${formatRatio(spread.max)})`;
}
