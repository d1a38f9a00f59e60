import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { untilAborted } from '../../lib/common/until-aborted.js';

const ABORTED = Symbol('aborted');

describe('untilAborted', () => {
  it('settles as the call does, leaving no listener on a signal that never aborts, however many calls', async () => {
    const { signal } = new AbortController();

    for (let call = 0; call < 1000; call++) {
      expect(await untilAborted(Promise.resolve(call), signal, () => ABORTED)).toBe(call);
    }
    const failure = new Error('the ledger is away');
    await expect(untilAborted(Promise.reject(failure), signal, () => ABORTED)).rejects.toBe(failure);

    expect(getEventListeners(signal, 'abort')).toEqual([]);
  });

  it('settles with the marker once the signal aborts, the call left behind failing later handled', async () => {
    const controller = new AbortController();
    let fail!: (error: Error) => void;
    const call = new Promise<string>((_, reject) => (fail = reject));

    const raced = untilAborted(call, controller.signal, () => ABORTED);
    controller.abort();

    expect(await raced).toBe(ABORTED);
    // vitest fails the file on an unhandled rejection: this one is handled by the race.
    fail(new Error('the ledger answered too late'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(getEventListeners(controller.signal, 'abort')).toEqual([]);
  });

  it('settles with the marker at once when the signal has aborted already', async () => {
    const controller = new AbortController();
    controller.abort();

    expect(await untilAborted(new Promise(() => undefined), controller.signal, () => ABORTED)).toBe(ABORTED);
    expect(getEventListeners(controller.signal, 'abort')).toEqual([]);
  });

  it('rejects with what onAbort throws, as a deadline does', async () => {
    const controller = new AbortController();
    const deadline = new Error('the deadline passed');

    const raced = untilAborted(new Promise(() => undefined), controller.signal, () => {
      throw deadline;
    });
    controller.abort();

    await expect(raced).rejects.toBe(deadline);
  });
});
