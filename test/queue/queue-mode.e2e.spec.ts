import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentMethodNotification } from 'nestjs-payouts';
import {
  listFailedNotifications,
  notificationJobId,
  replayFailedNotification,
  replayFailedNotifications,
} from 'nestjs-payouts/queue';
import { ADAPTERS, cardAdded, post } from '../notifications/notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import {
  ACK,
  FAILED,
  paymentMethodId,
  type QueueApp,
  SECRET,
  startQueueApp,
  uniqueQueueName,
  dedupeKeyOf,
  queueSuite,
} from './queue-test-app.js';

describeWithRedis('queue mode (payoutsQueue) on a real Redis', () => {
  const suite = queueSuite();
  const { launch } = suite;
  const completed = (app: QueueApp, notification: Record<string, unknown>) =>
    eventually(
      async () =>
        (await app.queue.getJob(notificationJobId(dedupeKeyOf(notification))))?.finishedOn ? true : undefined,
      10_000,
      'the job completes',
    );

  describe.each(ADAPTERS)('on %s', (adapter) => {
    it('acknowledges once stored; a worker runs the handler with the validated classes and a queue context', async () => {
      const app = await launch(adapter, {}, { rawBody: true });
      const notification = cardAdded({ extra: { nested: [1] } });

      const reply = await post(app.route, notification, { headers: { 'x-trace-secret': 'header-value-7f3a' } });

      expect([reply.status, reply.body]).toEqual([200, ACK]);
      await completed(app, notification);
      const [run] = app.events.runs;
      expect(app.events.runs).toHaveLength(1);
      expect(run!.notification).toBeInstanceOf(PaymentMethodNotification);
      expect(JSON.parse(JSON.stringify(run!.notification))).toEqual(notification);
      expect(run!.context).toMatchObject({
        source: 'queue',
        attempt: 1,
        headers: {},
        rawBody: undefined,
        account: 'default',
        dedupeKey: dedupeKeyOf(notification),
        ip: '127.0.0.1',
      });
      expect(run!.context.receivedAt).toBeInstanceOf(Date);
    });

    it('stores the notification and the context it needs, never a header, the query string or the raw body', async () => {
      const app = await launch(adapter, { worker: false }, { rawBody: true });
      const notification = cardAdded();

      const reply = await post(app.route, notification, { headers: { 'x-trace-secret': 'header-value-7f3a' } });

      expect(reply.status).toBe(200);
      const key = `bull:${app.queue.name}:${notificationJobId(dedupeKeyOf(notification))}`;
      const stored = await suite.client.hgetall(key);
      const data = JSON.parse(stored.data!);
      expect(data).toEqual({
        notification: JSON.stringify(notification),
        dedupeKey: dedupeKeyOf(notification),
        receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        ip: '127.0.0.1',
      });
      expect(JSON.parse(data.notification)).toEqual(notification);
      // A fixed name: the event type, whatever its length, is stored once, in the notification.
      expect(stored.name).toBe('notification');
      const everything = JSON.stringify(stored);
      for (const secret of [SECRET, 'header-value-7f3a', 'x-trace-secret', 'token=', 'content-length']) {
        expect(everything).not.toContain(secret);
      }
    });

    it.each([5_000, 10_000])(
      'stores a notification with an unknown field nested %i levels deep, and the handler receives it whole',
      async (depth) => {
        const app = await launch(adapter);
        const notification = cardAdded();
        // Written as text: JSON.stringify itself cannot go that deep.
        const nested = `${'{"x":'.repeat(depth)}"bottom"${'}'.repeat(depth)}`;
        const body = `${JSON.stringify(notification).slice(0, -1)},"extra":${nested}}`;

        const reply = await post(app.route, body);

        expect([reply.status, reply.body]).toEqual([200, ACK]);
        await completed(app, notification);
        expect(app.events.runs).toHaveLength(1);
        let received: unknown = app.events.runs[0]!.notification.extra;
        let levels = 0;
        while (typeof received === 'object' && received !== null && 'x' in received) {
          received = (received as { x: unknown }).x;
          levels += 1;
        }
        expect([levels, received]).toEqual([depth, 'bottom']);
        expect(app.events.runs[0]!.notification.paymentMethod.id).toBe(paymentMethodId(notification));
      },
    );

    it('refuses a wrong token with 401 and an invalid notification with 400, storing neither', async () => {
      const app = await launch(adapter);
      const invalid = cardAdded();
      (invalid.paymentMethod as { card: Record<string, unknown> }).card.expirationMonth = '13';

      const unauthorized = await post(app.route.replace(SECRET, 'wrong-token'), cardAdded());
      const rejected = await post(app.route, invalid);

      expect(unauthorized.status).toBe(401);
      expect([rejected.status, JSON.parse(rejected.body).errors]).toEqual([
        400,
        [{ field: 'paymentMethod.card.expirationMonth', message: 'must be a two-digit month, 01 to 12' }],
      ]);
      expect(await app.queue.getJobCounts('waiting', 'active', 'completed', 'failed')).toMatchObject({
        waiting: 0,
        active: 0,
        completed: 0,
        failed: 0,
      });
    });

    it('collapses concurrent deliveries and re-sends onto one job, acknowledging each, and runs the handler once', async () => {
      const app = await launch(adapter);
      const notification = cardAdded();

      const replies = await Promise.all(Array.from({ length: 20 }, () => post(app.route, notification)));
      await completed(app, notification);
      const resend = await post(app.route, notification);

      expect(new Set([...replies, resend].map((reply) => `${reply.status} ${reply.body}`))).toEqual(
        new Set([`200 ${ACK}`]),
      );
      expect(app.events.runs).toHaveLength(1);
      expect(await app.queue.getJobCounts('completed', 'waiting', 'delayed', 'failed')).toMatchObject({
        completed: 1,
        waiting: 0,
        delayed: 0,
        failed: 0,
      });
    });
  });

  it('retries a failing handler with exponential backoff, and completes on the third attempt', async () => {
    const logger = new RecordingLogger();
    const app = await launch('express', { attempts: 3, backoffMs: 100 }, { logger });
    app.events.behaviour = (_notification, context) => {
      if (context.attempt < 3) throw new Error(`database down on attempt ${context.attempt}`);
    };
    const notification = cardAdded();

    expect((await post(app.route, notification)).body).toBe(ACK);
    await completed(app, notification);

    const runs = app.events.runs;
    expect(runs.map((run) => run.context.attempt)).toEqual([1, 2, 3]);
    // BullMQ's exponential backoff: at least 100 ms, then at least 200 ms, before each retry.
    expect(runs[1]!.startedAt - runs[0]!.startedAt).toBeGreaterThanOrEqual(100);
    expect(runs[2]!.startedAt - runs[1]!.startedAt).toBeGreaterThanOrEqual(200);
    const job = await app.queue.getJob(notificationJobId(dedupeKeyOf(notification)));
    expect([await job!.getState(), job!.attemptsMade, job!.returnvalue]).toEqual(['completed', 3, 'handled']);
    expect(logger.messages('error')).toEqual([]);
    expect(logger.messages('warn').filter((line) => line.includes('it is retried'))).toHaveLength(2);
  });

  it('leaves a notification that always fails in the failed set, logs one error naming it, and replays it', async () => {
    const logger = new RecordingLogger();
    const app = await launch('fastify', { attempts: 2, backoffMs: 20 }, { logger });
    let broken = true;
    app.events.behaviour = () => {
      if (broken) throw new Error('the ledger is read-only');
    };
    const notification = cardAdded();
    const dedupeKey = dedupeKeyOf(notification);
    const jobId = notificationJobId(dedupeKey);

    expect((await post(app.route, notification)).body).toBe(ACK);
    const [failed] = await eventually(
      async () => {
        const list = await listFailedNotifications(app.queue);
        return list.length > 0 ? list : undefined;
      },
      10_000,
      'the notification is in the failed set',
    );

    expect(failed).toEqual({
      jobId,
      dedupeKey,
      eventType: 'PAYMENT_METHOD_ADDED',
      attemptsMade: 2,
      failedReason: `Handler failure on notification ${dedupeKey}: QueuedEvents.handle: the ledger is read-only`,
      failedAt: expect.any(Date),
    });
    expect(app.events.runs).toHaveLength(2);
    const errors = logger.messages('error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`Notification ${dedupeKey} failed for good after 2 attempts`);

    broken = false;
    expect(await replayFailedNotification(app.queue, jobId)).toBe('replayed');
    await completed(app, notification);
    expect(app.events.runs.map((run) => run.context.attempt)).toEqual([1, 2, 1]);
    expect(await listFailedNotifications(app.queue)).toEqual([]);
    expect(await replayFailedNotification(app.queue, jobId)).toBe('not-failed');
    expect(await replayFailedNotification(app.queue, 'notification-unknown')).toBe('not-found');
  });

  it('replays every failed notification at once', async () => {
    const app = await launch('express', { attempts: 1 }, { logger: new RecordingLogger() });
    let broken = true;
    app.events.behaviour = () => {
      if (broken) throw new Error('down');
    };
    const notifications = [cardAdded(), cardAdded(), cardAdded()];
    for (const notification of notifications) expect((await post(app.route, notification)).body).toBe(ACK);
    await eventually(async () => ((await app.queue.getFailedCount()) === 3 ? true : undefined), 10_000, 'all fail');

    broken = false;
    expect(await replayFailedNotifications(app.queue)).toBe(3);
    for (const notification of notifications) await completed(app, notification);
    expect(app.events.runs).toHaveLength(6);
    expect(await app.queue.getFailedCount()).toBe(0);
  });

  it('fails a job whose data no longer validates at once, without retries and without running a handler', async () => {
    const logger = new RecordingLogger();
    const app = await launch('express', { attempts: 5 }, { logger });
    const notification = cardAdded();
    (notification.paymentMethod as { card: Record<string, unknown> }).card.lastFour = '42';
    const dedupeKey = dedupeKeyOf(notification);

    await app.queue.add(
      'PAYMENT_METHOD_ADDED',
      { notification, dedupeKey, receivedAt: new Date().toISOString() },
      {
        jobId: notificationJobId(dedupeKey),
        attempts: 5,
      },
    );
    const [failed] = await eventually(
      async () => {
        const list = await listFailedNotifications(app.queue);
        return list.length > 0 ? list : undefined;
      },
      10_000,
      'the job fails',
    );

    expect(failed!.attemptsMade).toBe(1);
    expect(failed!.failedReason).toBe(
      'The stored notification no longer validates (paymentMethod.card.lastFour must be 4 digits); not retried',
    );
    expect(app.events.runs).toEqual([]);
    expect(logger.messages('error')).toEqual([expect.stringContaining(`Notification ${dedupeKey} failed for good`)]);
  });

  it('runs the jobs an earlier release stored: named after the event type, the notification as an object', async () => {
    const app = await launch('express');
    const notification = cardAdded();
    const dedupeKey = dedupeKeyOf(notification);

    await app.queue.add(
      'PAYMENT_METHOD_ADDED',
      { notification, dedupeKey, receivedAt: new Date().toISOString(), ip: '127.0.0.1' },
      { jobId: notificationJobId(dedupeKey), attempts: 3 },
    );
    await completed(app, notification);

    expect(app.events.runs).toHaveLength(1);
    expect(JSON.parse(JSON.stringify(app.events.runs[0]!.notification))).toEqual(notification);
    expect(app.events.runs[0]!.context).toMatchObject({ dedupeKey, source: 'queue', ip: '127.0.0.1' });
  });

  it('completes a notification that no handler takes, and says so', async () => {
    const logger = new RecordingLogger();
    const app = await launch('express', {}, { logger, providers: [] });
    const notification = cardAdded();

    expect((await post(app.route, notification)).body).toBe(ACK);
    await completed(app, notification);

    const job = await app.queue.getJob(notificationJobId(dedupeKeyOf(notification)));
    expect(job!.returnvalue).toBe('unhandled');
    expect(logger.messages('warn')).toContain(
      `No handler for PAYMENT_METHOD_ADDED notification ${dedupeKeyOf(notification)}; completed`,
    );
  });

  it('acknowledges a re-send within the retention without a run, and runs it again once the job was removed', async () => {
    const app = await launch('express', { retentionMs: 1000 });
    const first = cardAdded();
    const other = cardAdded();

    await post(app.route, first);
    await completed(app, first);
    expect((await post(app.route, first)).body).toBe(ACK);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // BullMQ removes completed jobs past their age when a later job completes.
    await post(app.route, other);
    await completed(app, other);
    expect(await app.queue.getJob(notificationJobId(dedupeKeyOf(first)))).toBeUndefined();
    expect((await post(app.route, first)).body).toBe(ACK);
    await completed(app, first);

    expect(app.events.runsOf(paymentMethodId(first))).toHaveLength(2);
    expect(app.events.runsOf(paymentMethodId(other))).toHaveLength(1);
  });

  it('answers 500 within enqueueTimeoutMs while Redis is down, never 200, and stores the re-send once it is back', async () => {
    const enqueueTimeoutMs = 300;
    const logger = new RecordingLogger();
    const app = await launch('fastify', { enqueueTimeoutMs }, { logger });
    const notification = cardAdded();

    await suite.redis.stop();
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const sentAt = Date.now();
        const reply = await post(app.route, notification);
        expect([reply.status, reply.body]).toEqual([500, FAILED]);
        // Without the limit the delivery would wait for Redis; the margin is for a loaded machine.
        expect(Date.now() - sentAt).toBeLessThan(enqueueTimeoutMs + 3000);
      }
    } finally {
      await suite.redis.restart();
    }
    expect(logger.messages('error')).toContain(
      `The notification queue could not store notification ${dedupeKeyOf(notification)}: no reply from Redis within ` +
        `${enqueueTimeoutMs} ms. Not acknowledged, so the service sends it again.`,
    );

    const reply = await eventually(
      async () => {
        const answer = await post(app.route, notification);
        return answer.status === 200 ? answer : undefined;
      },
      15_000,
      'the route acknowledges again once Redis is back',
    );
    expect(reply.body).toBe(ACK);
    await completed(app, notification);
    expect(app.events.runs).toHaveLength(1);
  }, 30_000);

  it('says that a web-only instance stores notifications for the workers, never that they are dropped', async () => {
    const queueName = uniqueQueueName();
    const webLogger = new RecordingLogger();
    const workerLogger = new RecordingLogger();
    await launch('express', { queueName, worker: false }, { logger: webLogger, providers: [] });
    await launch('fastify', { queueName, route: false }, { logger: workerLogger, providers: [] });

    expect(webLogger.messages('warn')).toEqual([]);
    expect(webLogger.messages('log')).toContain(
      "Notifications are stored for the queue's workers, which run the handlers",
    );
    // A worker without handlers does drop them: it says so.
    expect(workerLogger.messages('warn')).toContain(
      'No handler for PAYMENT_METHOD_ADDED notifications: they will be acknowledged and dropped. ' +
        'Decorate a provider method with @OnPaymentMethod…() to receive them.',
    );
  });

  it('splits the roles: a web instance only stores, a worker instance serves no route and runs the handlers', async () => {
    const queueName = uniqueQueueName();
    const web = await launch('express', { queueName, worker: false });
    const worker = await launch('fastify', { queueName, route: false });
    const notification = cardAdded();

    expect((await post(web.route, notification)).body).toBe(ACK);
    await completed(worker, notification);

    expect(web.events.runs).toEqual([]);
    expect(worker.events.runs).toHaveLength(1);
    expect((await post(worker.route, notification)).status).toBe(404);
  });
});

describeWithRedis('the queue of a registration', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(() => redis?.close());

  it('is a BullMQ Queue under getPayoutsQueueToken(), named after the account unless given a name', async () => {
    const app = await startQueueApp('express', redis, { queueName: undefined, worker: false });
    try {
      expect(app.queue).toBeInstanceOf(Queue);
      expect(app.queue.name).toBe('payouts-notifications');
    } finally {
      await app.close();
    }
  });
});
