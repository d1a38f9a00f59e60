import { describe, expect, it } from 'vitest';
import { notificationJobId } from 'nestjs-payouts/queue';

/*
 * A notification's job id is how a re-send finds the job already there, whichever release stored it: the ids below
 * are those that earlier releases gave these dedupe keys, and must never change.
 */
describe('notificationJobId', () => {
  it.each([
    [
      'PAYMENT_METHOD_ADDED:shp_7Hq2LmX9:pmt_000000000042:2025-03-14T09%3A26%3A53.589Z',
      'notification-87e43a454f975521f3e8b25ba749e9abc21370afbaa40a1fcc851d6a8adfbf67',
    ],
    [
      'default:PAYMENT_METHOD_ADDED:%C3%A9t%C3%A9:x',
      'notification-95c4416e0262488c2248be90185287a4d1b0b7b5bfb4adde358673bec34431a0',
    ],
    // Hashed as UTF-8, as before.
    [
      'compte-été:PAYMENT_METHOD_ADDED:x',
      'notification-e6c3b2ffe904711978aca9253adf8c9b3fc7184dd2b104e044eceee670bf7656',
    ],
  ])('gives %s the id earlier releases gave it', (dedupeKey, jobId) => {
    expect(notificationJobId(dedupeKey)).toBe(jobId);
  });
});
