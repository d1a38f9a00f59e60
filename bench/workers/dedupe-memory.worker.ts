import { InMemoryNotificationDedupeStore } from 'nestjs-payouts';
import { runChild } from '../child-main.js';

/** 6. Distinct notifications through the default dedupe store, as the route records them: claim, then complete. */
export interface FillResult {
  readonly notifications: number;
  readonly entries: number;
  /** Mean time of one claim + complete during this fill. */
  readonly microsPerNotification: number;
}

/** `--key-length=N` pads the payment method id so that every key has N characters; the sample's length otherwise. */
const keyLength = Number(process.argv.find((arg) => arg.startsWith('--key-length='))?.slice('--key-length='.length) ?? 0);

/** A key of the same shape as the route's (URI-encoded parts joined by ':'), with a distinct payment method id. */
function dedupeKey(sequence: number): string {
  const parts = ['PAYMENT_METHOD_ADDED', 'shp_7Hq2LmX9', `pmt_${sequence.toString().padStart(12, '0')}`, '2025-03-14T09:26:53.589Z'];
  const key = parts.map(encodeURIComponent).join(':');
  if (key.length >= keyLength) return key;
  parts[2] = `${parts[2]}${'x'.repeat(keyLength - key.length)}`;
  return parts.map(encodeURIComponent).join(':');
}

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
          const key = dedupeKey(notifications++);
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
