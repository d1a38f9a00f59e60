import { describe, expect, it } from 'vitest';
import { eachInFlight } from '../../lib/common/each-in-flight.js';

/** A step whose end the test decides, to see which steps run at once. */
function controlledSteps() {
  const started: number[] = [];
  const finish = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  const step = (item: number) =>
    new Promise<void>((resolve, reject) => {
      started.push(item);
      finish.set(item, { resolve, reject });
    });
  return { started, finish, step };
}

/** Lets every settled promise's continuation run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('eachInFlight', () => {
  it('starts the items in order, never more than the limit at once', async () => {
    const { started, finish, step } = controlledSteps();
    const done = eachInFlight([1, 2, 3, 4, 5], 2, step);
    await settle();
    expect(started).toEqual([1, 2]);
    finish.get(2)!.resolve();
    await settle();
    expect(started).toEqual([1, 2, 3]);
    finish.get(1)!.resolve();
    finish.get(3)!.resolve();
    await settle();
    expect(started).toEqual([1, 2, 3, 4, 5]);
    finish.get(4)!.resolve();
    finish.get(5)!.resolve();
    await expect(done).resolves.toBeUndefined();
  });

  it('starts nothing more after a step fails, waits for the started ones, then throws the first error', async () => {
    const { started, finish, step } = controlledSteps();
    let rejected: unknown;
    const done = eachInFlight([1, 2, 3, 4], 2, step).catch((error: unknown) => (rejected = error));
    await settle();
    const first = new Error('chunk 1 failed');
    finish.get(1)!.reject(first);
    await settle();
    expect(started).toEqual([1, 2]);
    // Step 2 still runs: the call has not settled yet.
    expect(rejected).toBeUndefined();
    finish.get(2)!.reject(new Error('chunk 2 failed'));
    await done;
    expect(rejected).toBe(first);
    expect(started).toEqual([1, 2]);
  });

  it('runs every item one at a time with a limit of 1, and nothing for no items', async () => {
    const order: string[] = [];
    await eachInFlight(['a', 'b', 'c'], 1, async (item) => {
      order.push(`start ${item}`);
      await settle();
      order.push(`end ${item}`);
    });
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    await expect(eachInFlight([], 2, () => Promise.reject(new Error('never called')))).resolves.toBeUndefined();
  });
});
