import { describe, expect, it } from 'vitest';
import {
  completedLine,
  duration,
  plainLine,
  type ProgressFrame,
  terminalLine,
} from '../../lib/payout-runs/cli/progress-line.js';

const counts = { queued: 90, sending: 10, retrying: 0, sent: 97, refused: 2, unknown: 1, total: 200 };
const frame: ProgressFrame = { runId: 'sellers-2025-03', counts, completedAt: undefined, perSecond: 24.5 };

describe('the lines of progress --watch', () => {
  it('draws a bar with the share ended, each outcome, the rate and the time left on a terminal', () => {
    expect(terminalLine(frame, 200)).toBe(
      'sellers-2025-03 [###############---------------]  50% 100/200  sent 97  refused 2  unknown 1  24.5/s, 5s left',
    );
  });

  it('cuts the terminal line to the width, so that it never wraps and can be redrawn', () => {
    expect(terminalLine(frame, 40)).toBe('sellers-2025-03 [###############-------');
    expect(terminalLine(frame, 40)).toHaveLength(39);
  });

  it('says so while the rate is not known yet, or nothing moves', () => {
    expect(terminalLine({ ...frame, perSecond: undefined }, 200)).toMatch(/ -\/s, time left unknown$/);
    expect(plainLine({ ...frame, perSecond: 0 })).toMatch(/; 0\.0\/s, time left unknown$/);
  });

  it('prints every count on a plain line', () => {
    expect(plainLine(frame)).toBe(
      'Run sellers-2025-03: 100 of 200 ended (50%): 97 sent, 2 refused, 1 unknown; 90 queued, 10 sending, 0 retrying; ' +
        '24.5/s, 5s left',
    );
  });

  it('ends with the completion', () => {
    const done = {
      ...frame,
      counts: { ...counts, queued: 0, sending: 0, sent: 197 },
      completedAt: new Date('2025-03-31T10:00:00.000Z'),
    };
    expect(plainLine(done)).toMatch(/: 200 of 200 ended \(100%\): .*; completed$/);
    expect(completedLine(done)).toBe(
      'Run sellers-2025-03 completed at 2025-03-31T10:00:00.000Z: 197 sent, 2 refused, 1 unknown of 200',
    );
  });

  it('escapes a run id that holds control characters or quotes', () => {
    const line = plainLine({ ...frame, runId: 'odd\n\u001b[31mid' });
    expect(line.startsWith('Run "odd\\n\\u001b[31mid": ')).toBe(true);
    expect(line).not.toContain('\n');
    expect(line).not.toContain('\u001b');
    expect(terminalLine({ ...frame, runId: 'odd\n\u001b[31mid' }, 200)).not.toContain('\u001b');
  });

  it('words the time left in seconds, minutes or hours', () => {
    expect([duration(4.2), duration(65), duration(3600 * 3 + 20 * 60 + 5)]).toEqual(['5s', '1m 05s', '3h 20m']);
  });
});
