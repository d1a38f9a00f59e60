import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import {
  type NotificationContext,
  OnPaymentMethodAdded,
  PaymentMethodNotification,
  PayoutsService,
} from 'nestjs-payouts';
import { notificationJobId } from 'nestjs-payouts/queue';
import { ADAPTERS, cardAdded, post } from '../notifications/notifications-test-app.js';
import { RecordingLogger } from '../recording-logger.js';
import { eventually } from '../support/eventually.js';
import { describeWithRedis } from '../support/redis-suite.js';
import { ACK, dedupeKeyOf, paymentMethodId, type QueueApp, QueuedEvents, queueSuite } from './queue-test-app.js';

/** A second handler of added cards: fails the runs it is told to, by the attempt its context gives. */
@Injectable()
class QueuedMailer {
  readonly attempts: number[] = [];
  failAttempts = 0;

  @OnPaymentMethodAdded()
  send(_notification: PaymentMethodNotification, context: NotificationContext): void {
    this.attempts.push(context.attempt);
    if (context.attempt <= this.failAttempts) throw new Error(`mail server down on attempt ${context.attempt}`);
  }
}

describeWithRedis('queue mode runs each handler of a notification until it succeeds, once', () => {
  const suite = queueSuite();
  const launch = async (adapter: (typeof ADAPTERS)[number]) => {
    return suite.launch(
      adapter,
      { attempts: 3, backoffMs: 20 },
      { providers: [QueuedEvents, QueuedMailer], logger: new RecordingLogger() },
    );
  };
  const finished = (app: QueueApp, notification: Record<string, unknown>) =>
    eventually(
      async () => {
        const job = await app.queue.getJob(notificationJobId(dedupeKeyOf(notification)));
        return job?.finishedOn ? job : undefined;
      },
      10_000,
      'the job completes',
    );

  describe.each(ADAPTERS)('on %s', (adapter) => {
    it('runs the handler that succeeded once, and the failing one on each of three attempts', async () => {
      const app = await launch(adapter);
      const events: unknown[] = [];
      app.app.get(PayoutsService).on('notification', ({ outcome, skippedHandlers }) => {
        events.push([outcome, skippedHandlers]);
      });
      const mailer = app.app.get(QueuedMailer);
      mailer.failAttempts = 2;
      const notification = cardAdded();

      expect((await post(app.route, notification)).body).toBe(ACK);
      const job = await finished(app, notification);

      expect([await job.getState(), job.attemptsMade, job.returnvalue]).toEqual(['completed', 3, 'handled']);
      expect(app.events.runsOf(paymentMethodId(notification)).map((run) => run.context.attempt)).toEqual([1]);
      expect(mailer.attempts).toEqual([1, 2, 3]);
      expect((job.data as { handlers?: unknown }).handlers).toEqual({
        succeeded: ['QueuedEvents.handle'],
        failures: { 'QueuedMailer.send': 2 },
      });
      // The route's delivery, then the worker's three attempts.
      expect(events).toEqual([
        ['enqueued', undefined],
        ['failed', undefined],
        ['failed', ['QueuedEvents.handle']],
        ['acknowledged', ['QueuedEvents.handle']],
      ]);
    });
  });

  it('handles a job stored by the previous release, whose data has no record', async () => {
    const app = await launch('express');
    const mailer = app.app.get(QueuedMailer);
    mailer.failAttempts = 1;
    const notification = cardAdded();
    const dedupeKey = dedupeKeyOf(notification);

    // The job data of the previous release: the notification and its context, nothing else.
    await app.queue.add(
      'PAYMENT_METHOD_ADDED',
      { notification, dedupeKey, receivedAt: new Date().toISOString(), ip: '203.0.113.7' },
      { jobId: notificationJobId(dedupeKey), attempts: 3, backoff: { type: 'exponential', delay: 20 } },
    );
    const job = await finished(app, notification);

    expect([await job.getState(), job.attemptsMade]).toEqual(['completed', 2]);
    expect(app.events.runsOf(paymentMethodId(notification)).map((run) => run.context.attempt)).toEqual([1]);
    expect(app.events.runsOf(paymentMethodId(notification))[0]!.context.ip).toBe('203.0.113.7');
    expect(mailer.attempts).toEqual([1, 2]);
  });

  it('writes nothing to a job whose one handler succeeds', async () => {
    const app = await suite.launch('express', { attempts: 3, backoffMs: 20 });
    const notification = cardAdded();

    expect((await post(app.route, notification)).body).toBe(ACK);
    const job = await finished(app, notification);

    expect(job.returnvalue).toBe('handled');
    expect(job.data).toMatchObject({ dedupeKey: dedupeKeyOf(notification) });
    expect(job.data).not.toHaveProperty('handlers');
  });
});
