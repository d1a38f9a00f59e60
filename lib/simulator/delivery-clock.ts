import { setTimeout as sleep } from 'node:timers/promises';

/** Where a delivery reads the time and waits between attempts; tests pass one that does not really wait. */
export interface DeliveryClock {
  now(): Date;
  sleep(ms: number): Promise<void>;
}

export const systemClock: DeliveryClock = {
  now: () => new Date(),
  sleep: async (ms) => {
    await sleep(ms);
  },
};
