import { InMemoryNotificationDedupeStore } from 'nestjs-payouts';
import { runChild } from '../child-main.js';
import { sampleDedupeKey } from '../notification-sample.js';
import { argValue } from '../command-line.js';

/** 6. Distinct notifications through the default dedupe store, as the route records them: claim, then complete. */
export interface FillResult {
  readonly notifications: number;
  readonly entries: number;
  /** Mean time of one claim + complete during this fill. */
  readonly microsPerNotification: number;
}

/** `--key-length=N` pads the payment method id so that every key has N characters; the sample's length otherwise. */
const keyLength = Number(argValue('key-length') ?? 0);

await runChild(async () => {
  const store = new InMemoryNotificationDedupeStore();
  let notifications = 0;
  return {
    commands: {
      /** Records more distinct notifications until `total` have gone through the store. */
      fill: async (total) => {
        const from = notifications;
        const start = performance.now();
        while (notifications < (total as number)) {
          const key = sampleDedupeKey(notifications++, keyLength);
          await store.claim(key);
          await store.complete(key);
        }
        const microsPerNotification = ((performance.now() - start) * 1000) / (notifications - from);
        return { notifications, entries: store.size, microsPerNotification };
      },
    },
    close: async () => {},
  };
});
