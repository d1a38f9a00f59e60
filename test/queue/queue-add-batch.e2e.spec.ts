import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { notificationJobId } from 'nestjs-payouts/queue';
import { ADD_TIMED_OUT, NotificationAddBatch } from '../../lib/queue/notification-add-batch.js';
import { ADAPTERS, cardAdded, post } from '../notifications/notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { ACK, dedupeKeyOf, FAILED, uniqueQueueName, queueSuite } from './queue-test-app.js';

/*
 * The route adds the jobs of the notifications of one turn of the event loop together. A job whose key already holds
 * something that is not a job (a plain string) makes BullMQ's add script fail with WRONGTYPE: a real way to have
 * exactly one add of a batch fail.
 */
describeWithRedis('queue mode: the adds of one turn of the event loop, sent together', () => {
  const suite = queueSuite();
  /** A BullMQ queue of its own on the suite's Redis, closed after the test. */
  const newQueue = () =>
    suite.closeAfterTest(new Queue(uniqueQueueName(), { connection: { host: '127.0.0.1', port: suite.redis.port } }));

  /** Far longer than Redis takes to answer: only the test that pauses Redis meets it. */
  const TIMEOUT_MS = 10_000;
  const job = (id: string) => ({ name: 'notification', data: { id }, opts: { jobId: id, removeOnFail: false } });

  it('settles each add of a batch with its own outcome: only the job that could not be stored fails', async () => {
    const queue = newQueue();
    await suite.client.set(queue.toKey('poisoned'), 'not a job');
    const batch = new NotificationAddBatch(queue, TIMEOUT_MS);

    // Added in one turn of the event loop: one batch.
    const outcomes = await Promise.all(['first', 'poisoned', 'third'].map((id) => batch.add(job(id))));

    expect(outcomes[0]).toBeUndefined();
    expect(String(outcomes[1])).toMatch(/WRONGTYPE/);
    expect(outcomes[2]).toBeUndefined();
    expect((await queue.getJob('first'))?.data).toEqual({ id: 'first' });
    expect((await queue.getJob('third'))?.data).toEqual({ id: 'third' });
    expect(await suite.client.get(queue.toKey('poisoned'))).toBe('not a job');
    expect((await queue.getJobCounts('waiting')).waiting).toBe(2);
  });

  it('stores every job of a batch, and a job added twice in one batch once', async () => {
    const queue = newQueue();
    const batch = new NotificationAddBatch(queue, TIMEOUT_MS);

    const outcomes = await Promise.all(['a', 'b', 'a', 'c'].map((id) => batch.add(job(id))));
    const alone = await batch.add(job('d'));

    expect(outcomes).toEqual([undefined, undefined, undefined, undefined]);
    expect(alone).toBeUndefined();
    expect((await queue.getJobCounts('waiting')).waiting).toBe(4);
    expect((await queue.getWaiting()).map((stored) => stored.id).sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('fails a batch of one whose add fails', async () => {
    const queue = newQueue();
    await suite.client.set(queue.toKey('poisoned'), 'not a job');

    expect(String(await new NotificationAddBatch(queue, TIMEOUT_MS).add(job('poisoned')))).toMatch(/WRONGTYPE/);
    expect((await queue.getJobCounts('waiting')).waiting).toBe(0);
  });

  it('settles the adds of a turn that Redis has not answered within the deadline, and only those', async () => {
    const queue = newQueue();
    await queue.waitUntilReady();
    const batch = new NotificationAddBatch(queue, 300);

    const answered = await Promise.all(['early-1', 'early-2'].map((id) => batch.add(job(id))));
    // Redis holds every write command, BullMQ's add script included, for 3 s: no add of this turn gets an answer.
    expect(await suite.client.call('CLIENT', 'PAUSE', '3000', 'WRITE')).toBe('OK');
    try {
      const outcomes = await Promise.all(['late-1', 'late-2', 'late-3'].map((id) => batch.add(job(id))));
      expect(outcomes).toEqual([ADD_TIMED_OUT, ADD_TIMED_OUT, ADD_TIMED_OUT]);
    } finally {
      await suite.client.call('CLIENT', 'UNPAUSE');
    }

    expect(answered).toEqual([undefined, undefined]);
    // A later turn has its own deadline, and the adds that timed out are stored once Redis answers.
    expect(await batch.add(job('after'))).toBeUndefined();
    expect((await queue.getWaiting()).map((stored) => stored.id).sort()).toEqual([
      'after',
      'early-1',
      'early-2',
      'late-1',
      'late-2',
      'late-3',
    ]);
  });

  describe.each(ADAPTERS)('through the route on %s', (adapter) => {
    it('stores each job of a turn with its own id and the configured retries and retention', async () => {
      const app = await suite.launch(adapter, {
        worker: false,
        attempts: 4,
        backoffMs: 250,
        retentionMs: 90_500,
      });
      const notifications = Array.from({ length: 3 }, () => cardAdded());

      const replies = await Promise.all(notifications.map((notification) => post(app.route, notification)));

      expect(replies.map((reply) => `${reply.status} ${reply.body}`)).toEqual(notifications.map(() => `200 ${ACK}`));
      const jobs = await Promise.all(
        notifications.map((notification) => app.queue.getJob(notificationJobId(dedupeKeyOf(notification)))),
      );
      for (const [index, stored] of jobs.entries()) {
        const jobId = notificationJobId(dedupeKeyOf(notifications[index]!));
        expect(stored?.id).toBe(jobId);
        expect(stored?.opts).toMatchObject({
          jobId,
          attempts: 4,
          backoff: { type: 'exponential', delay: 250 },
          // Whole seconds, rounded up.
          removeOnComplete: { age: 91 },
          removeOnFail: false,
        });
      }
    });

    it('answers 500 for exactly the notification whose job could not be stored, and 200 for the others', async () => {
      const logger = new RecordingLogger();
      const app = await suite.launch(adapter, { worker: false }, { logger });
      const notifications = Array.from({ length: 6 }, () => cardAdded());
      const poisoned = notifications[2]!;
      const poisonedId = notificationJobId(dedupeKeyOf(poisoned));
      await suite.client.set(app.queue.toKey(poisonedId), 'not a job');

      const replies = await Promise.all(notifications.map((notification) => post(app.route, notification)));

      expect(replies.map((reply) => `${reply.status} ${reply.body}`)).toEqual(
        notifications.map((notification) => (notification === poisoned ? `500 ${FAILED}` : `200 ${ACK}`)),
      );
      const others = notifications.filter((notification) => notification !== poisoned);
      const stored = await Promise.all(
        others.map(async (notification) => (await app.queue.getJob(notificationJobId(dedupeKeyOf(notification))))?.id),
      );
      expect(stored).toEqual(others.map((notification) => notificationJobId(dedupeKeyOf(notification))));
      expect(await suite.client.get(app.queue.toKey(poisonedId))).toBe('not a job');
      const errors = logger.messages('error');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(dedupeKeyOf(poisoned));
    });
  });
});
