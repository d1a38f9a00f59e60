/** Prints results as Markdown tables: readable in a terminal and pasted as-is into bench/README.md. */

export type Cell = string | number;

export function printTable(title: string, headers: readonly string[], rows: readonly (readonly Cell[])[]): void {
  const text = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : cell)));
  const widths = headers.map((header, column) => Math.max(header.length, ...text.map((row) => row[column]!.length)));
  // Text columns align left, figures right (Markdown `---:`).
  const numeric = headers.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === 'number'));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (numeric[column] ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
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
