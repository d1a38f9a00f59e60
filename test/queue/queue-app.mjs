// One instance of a merchant app in queue mode, run as its own process by the queue specs. Plain JavaScript on the
// built package, loaded by name as an application does.
//   node queue-app.mjs --adapter=express|fastify --redis-port=… [--role=both|web|worker] [--attempts=…]
//     [--backoff-ms=…] [--lock-ms=…] [--enqueue-timeout-ms=…] [--shutdown-timeout-ms=…] [--mailer]
// Prints `ready <port>` (port 0 for a worker-only instance), then `handler-start <payment method id> <attempt>` and
// `handler-done <id>` for each run of the handler, and `error <message>` / `warn <message>` for each error and warning
// the app logs. With SIGTERM it
// shuts down gracefully (enableShutdownHooks). A notification's `testBehaviour` field makes the handler wait
// (`delayMs`) or fail on its first `failAttempts` attempts. With `--mailer`, a second handler prints
// `mailer-start <id> <attempt>` and `mailer-done <id>`, waiting `mailerDelayMs` in between.
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { OnPaymentMethodAdded, PayoutsModule } from 'nestjs-payouts';
import { payoutsQueue } from 'nestjs-payouts/queue';

const { values: options } = parseArgs({
  options: {
    adapter: { type: 'string', default: 'express' },
    'redis-port': { type: 'string' },
    role: { type: 'string', default: 'both' },
    attempts: { type: 'string', default: '3' },
    'backoff-ms': { type: 'string', default: '100' },
    'lock-ms': { type: 'string', default: '30000' },
    'enqueue-timeout-ms': { type: 'string', default: '2000' },
    'shutdown-timeout-ms': { type: 'string', default: '10000' },
    mailer: { type: 'boolean', default: false },
  },
});
const role = options.role;

class CardEvents {
  async added(notification, context) {
    const id = notification.paymentMethod.id;
    const behaviour = notification.testBehaviour ?? {};
    console.log(`handler-start ${id} ${context.attempt}`);
    if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
    if (context.attempt <= (behaviour.failAttempts ?? 0))
      throw new Error(`failed attempt ${context.attempt}, as asked`);
    console.log(`handler-done ${id}`);
  }
}
Reflect.decorate([Injectable()], CardEvents);
Reflect.decorate(
  [OnPaymentMethodAdded()],
  CardEvents.prototype,
  'added',
  Object.getOwnPropertyDescriptor(CardEvents.prototype, 'added'),
);

class Mailer {
  async send(notification, context) {
    const id = notification.paymentMethod.id;
    console.log(`mailer-start ${id} ${context.attempt}`);
    const delayMs = notification.testBehaviour?.mailerDelayMs;
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    console.log(`mailer-done ${id}`);
  }
}
Reflect.decorate([Injectable()], Mailer);
Reflect.decorate(
  [OnPaymentMethodAdded()],
  Mailer.prototype,
  'send',
  Object.getOwnPropertyDescriptor(Mailer.prototype, 'send'),
);

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: 'http://127.0.0.1:9/v1',
          apiKey: 'queue-api-key',
          accessToken: 'queue-access-token',
          notifications: {
            verification: 'none',
            dispatcher: payoutsQueue({
              connection: { host: '127.0.0.1', port: Number(options['redis-port']) },
              route: role !== 'worker',
              worker: role !== 'web',
              attempts: Number(options.attempts),
              backoffMs: Number(options['backoff-ms']),
              lockDurationMs: Number(options['lock-ms']),
              enqueueTimeoutMs: Number(options['enqueue-timeout-ms']),
              shutdownTimeoutMs: Number(options['shutdown-timeout-ms']),
            }),
          },
        }),
      ],
      providers: options.mailer ? [CardEvents, Mailer] : [CardEvents],
    }),
  ],
  AppModule,
);

const logger = {
  log() {},
  warn: (message) => console.log(`warn ${String(message).split('\n')[0]}`),
  debug() {},
  verbose() {},
  error: (message) => console.log(`error ${String(message).split('\n')[0]}`),
  fatal: (message) => console.log(`error ${String(message).split('\n')[0]}`),
};
const app = await NestFactory.create(
  AppModule,
  options.adapter === 'fastify' ? new FastifyAdapter() : new ExpressAdapter(),
  {
    logger,
  },
);
app.enableShutdownHooks();
if (role === 'worker') {
  await app.init();
  console.log('ready 0');
} else {
  await app.listen(0, '127.0.0.1');
  console.log(`ready ${app.getHttpServer().address().port}`);
}
