import { printable } from '../../common/printable.js';
import type { PayoutRunCounts } from '../payout-run-results.js';

/** What one line of `progress --watch` shows of a run. */
export interface ProgressFrame {
  readonly runId: string;
  readonly counts: PayoutRunCounts;
  readonly completedAt: Date | undefined;
  /** Payouts ended (sent, refused or unknown) per second, lately; undefined until two readings tell. */
  readonly perSecond: number | undefined;
}

/** Characters of the bar between its brackets, on a terminal wide enough. */
const BAR_WIDTH = 30;

/** Payouts of the run that have ended: sent, refused, or parked as unknown. */
export function endedCount({ sent, refused, unknown }: PayoutRunCounts): number {
  return sent + refused + unknown;
}

/**
 * The run on one line of a terminal, redrawn in place: a bar, the share ended, what became of them, the rate and the
 * time left. Cut to `columns`, so that it never wraps (a wrapped line could not be redrawn in place).
 */
export function terminalLine(frame: ProgressFrame, columns: number): string {
  const { counts } = frame;
  const ended = endedCount(counts);
  const share = counts.total === 0 ? 1 : ended / counts.total;
  const filled = Math.round(share * BAR_WIDTH);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
  const line =
    `${printable(frame.runId)} ${bar} ${percent(share).padStart(4)} ${ended}/${counts.total}  ` +
    `sent ${counts.sent}  refused ${counts.refused}  unknown ${counts.unknown}  ${pace(frame)}`;
  return line.length > columns ? line.slice(0, Math.max(columns - 1, 0)) : line;
}

/** The run on a line of its own, for a log or a pipe: every count, and the rate and time left when known. */
export function plainLine(frame: ProgressFrame): string {
  const { counts } = frame;
  const ended = endedCount(counts);
  const share = counts.total === 0 ? 1 : ended / counts.total;
  return (
    `Run ${printable(frame.runId)}: ${ended} of ${counts.total} ended (${percent(share)}): ` +
    `${counts.sent} sent, ${counts.refused} refused, ${counts.unknown} unknown; ` +
    `${counts.queued} queued, ${counts.sending} sending, ${counts.retrying} retrying; ${pace(frame)}`
  );
}

/** The last line, once the run has completed. */
export function completedLine(frame: ProgressFrame): string {
  const { counts } = frame;
  return (
    `Run ${printable(frame.runId)} completed at ${frame.completedAt!.toISOString()}: ` +
    `${counts.sent} sent, ${counts.refused} refused, ${counts.unknown} unknown of ${counts.total}`
  );
}

function percent(share: number): string {
  return `${Math.floor(share * 100)}%`;
}

/** The rate and the time left, or what stands in for them while there is none. */
function pace(frame: ProgressFrame): string {
  if (frame.completedAt) return 'completed';
  const { perSecond } = frame;
  if (perSecond === undefined) return '-/s, time left unknown';
  const rate = `${perSecond.toFixed(1)}/s`;
  if (perSecond === 0) return `${rate}, time left unknown`;
  const left = (frame.counts.total - endedCount(frame.counts)) / perSecond;
  return `${rate}, ${duration(left)} left`;
}

/** `45s`, `12m 05s`, `3h 20m`: a time left, to the second below an hour. */
export function duration(seconds: number): string {
  const whole = Math.ceil(seconds);
  if (whole < 60) return `${whole}s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes}m ${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}
