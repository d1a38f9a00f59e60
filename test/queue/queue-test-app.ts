import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { OnPaymentMethodEvent, type NotificationContext, PaymentMethodNotification } from 'nestjs-payouts';
import { getPayoutsQueueToken, payoutsQueue, type PayoutsQueueOptions } from 'nestjs-payouts/queue';
import {
  type AdapterName,
  type NotificationsApp,
  type NotificationsAppOptions,
  startNotificationsApp,
} from '../notifications/notifications-test-app.js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { RedisServer } from '../support/redis-server.js';

export const ACK = '{"ResultCode":0}';
export const FAILED = '{"statusCode":500,"message":"The notification could not be handled"}';
export const SECRET = 'queue-notifications-secret';

export interface HandlerRun {
  readonly notification: PaymentMethodNotification;
  readonly context: NotificationContext;
  readonly startedAt: number;
}

/** Records every run of the handler; `behaviour` lets a test make it wait or fail, by attempt. */
@Injectable()
export class QueuedEvents {
  readonly runs: HandlerRun[] = [];
  behaviour: (notification: PaymentMethodNotification, context: NotificationContext) => void | Promise<void> = () =>
    undefined;

  @OnPaymentMethodEvent()
  async handle(notification: PaymentMethodNotification, context: NotificationContext): Promise<void> {
    this.runs.push({ notification, context, startedAt: Date.now() });
    await this.behaviour(notification, context);
  }

  /** The runs of the notification of payment method `id`. */
  runsOf(id: string): HandlerRun[] {
    return this.runs.filter((run) => run.notification.paymentMethod.id === id);
  }
}

export interface QueueApp extends NotificationsApp {
  readonly events: QueuedEvents;
  readonly queue: Queue;
  /** The route's URL, with the secret in its query string. */
  readonly route: string;
}

let queues = 0;

/** A fresh queue name per app, so that the specs sharing one Redis never see each other's jobs. */
export function uniqueQueueName(): string {
  queues += 1;
  return `spec-${process.pid}-${queues}`;
}

/** An app in queue mode on a real adapter and a real Redis, listening on a free loopback port. */
export async function startQueueApp(
  adapter: AdapterName,
  redis: RedisServer,
  queueOptions: Partial<PayoutsQueueOptions> = {},
  appOptions: Partial<NotificationsAppOptions> = {},
): Promise<QueueApp> {
  const started = await startNotificationsApp({
    adapter,
    notifications: {
      verification: { secret: { value: SECRET } },
      dispatcher: payoutsQueue({
        connection: { host: '127.0.0.1', port: redis.port },
        queueName: uniqueQueueName(),
        attempts: 3,
        backoffMs: 50,
        ...queueOptions,
      }),
    },
    providers: [QueuedEvents],
    ...appOptions,
  });
  return {
    ...started,
    // Looked up when read: an app given other providers has none.
    get events() {
      return started.app.get(QueuedEvents);
    },
    queue: started.app.get<string, Queue>(getPayoutsQueueToken()),
    route: started.url(`payouts/notifications?token=${SECRET}`),
  };
}

/** A client of the test's own, to read what the queue stored. */
export function inspectRedis(redis: RedisServer): Redis {
  const client = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  // Redis is stopped on purpose by some specs.
  client.on('error', () => undefined);
  return client;
}

export const paymentMethodId = (notification: Record<string, unknown>) =>
  (notification.paymentMethod as { id: string }).id;

/** The route's dedupe key of a notification whose ids need no encoding, as the tests build them. */
export const dedupeKeyOf = (notification: Record<string, unknown>): string => {
  const { shopper, paymentMethod, timestamp } = notification as {
    shopper: { id: string };
    paymentMethod: { id: string };
    timestamp: string;
  };
  return `${notification.eventType}:${shopper.id}:${paymentMethod.id}:${encodeURIComponent(timestamp)}`;
};

/** What a queue-mode spec shares: its own Redis, a client to look into it, and apps closed after each test. */
export interface QueueSuite {
  /** The suite's Redis server, started before its first test. */
  readonly redis: RedisServer;
  /** An ioredis client of that server, to read and write what the route and BullMQ keep there. */
  readonly client: Redis;
  /** An app in queue mode on the suite's Redis, closed after the test. */
  launch(
    adapter: AdapterName,
    queueOptions?: Partial<PayoutsQueueOptions>,
    appOptions?: Partial<NotificationsAppOptions>,
  ): Promise<QueueApp>;
  /** Closes `closable` (an app, a BullMQ queue) after the test. */
  closeAfterTest<T extends { close(): Promise<unknown> }>(closable: T): T;
}

/** Registers the hooks of a queue-mode spec; call it at the top of its `describe`. */
export function queueSuite(): QueueSuite {
  let redis: RedisServer | undefined;
  let client: Redis | undefined;
  const open: { close(): Promise<unknown> }[] = [];
  beforeAll(async () => {
    redis = await RedisServer.start();
    client = inspectRedis(redis);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.close();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((closable) => closable.close()));
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the suite starts its Redis in beforeAll');
    return value;
  };
  const suite: QueueSuite = {
    get redis() {
      return started(redis);
    },
    get client() {
      return started(client);
    },
    launch: async (adapter, queueOptions, appOptions) =>
      suite.closeAfterTest(await startQueueApp(adapter, suite.redis, queueOptions, appOptions)),
    closeAfterTest: (closable) => {
      open.push(closable);
      return closable;
    },
  };
  return suite;
}
