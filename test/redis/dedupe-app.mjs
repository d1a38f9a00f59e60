// One instance of a merchant app whose notification route shares a Redis dedupe store, run as its own process by
// several-instances.e2e.spec.ts. Plain JavaScript on the built package, loaded by name as an application does.
//   node dedupe-app.mjs --adapter=express|fastify --client=node-redis|ioredis --redis-url=redis://… --lease-ms=…
//     [--mailer]
// Prints `listening <port>`, then `handler-start <payment method id>` and `handler-done <id>` for each handling.
// A notification's `testBehaviour` field makes the handler wait (`delayMs`), fail (`failOn`) or hang (`hangOn`)
// on the instance of that adapter. With `--mailer`, a second handler prints `mailer-start <id> <attempt>` and fails
// on the instance named by `mailerFailOn`.
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { OnPaymentMethodAdded, PayoutsModule } from 'nestjs-payouts';
import { RedisNotificationDedupeStore } from 'nestjs-payouts/redis';

const { values: options } = parseArgs({
  options: {
    adapter: { type: 'string' },
    client: { type: 'string' },
    'redis-url': { type: 'string' },
    'lease-ms': { type: 'string' },
    'command-timeout-ms': { type: 'string' },
    mailer: { type: 'boolean', default: false },
  },
});
const adapter = options.adapter;

async function connectRedis() {
  const url = options['redis-url'];
  if (options.client === 'ioredis') {
    const { Redis } = await import('ioredis');
    const redis = new Redis(url, { lazyConnect: true });
    redis.on('error', () => {});
    await redis.connect();
    return redis;
  }
  const { createClient } = await import('redis');
  // Without an error listener, node-redis would crash the process when Redis goes away.
  const redis = createClient({ url }).on('error', () => {});
  await redis.connect();
  return redis;
}

class CardEvents {
  async added(notification) {
    const id = notification.paymentMethod.id;
    const behaviour = notification.testBehaviour ?? {};
    console.log(`handler-start ${id}`);
    if (behaviour.hangOn === adapter) await new Promise(() => {});
    if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
    if (behaviour.failOn === adapter) throw new Error(`handler failed on ${adapter}, as the test asked`);
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
  send(notification, context) {
    const behaviour = notification.testBehaviour ?? {};
    console.log(`mailer-start ${notification.paymentMethod.id} ${context.attempt}`);
    if (behaviour.mailerFailOn === adapter) throw new Error(`mailer failed on ${adapter}, as the test asked`);
  }
}
Reflect.decorate([Injectable()], Mailer);
Reflect.decorate(
  [OnPaymentMethodAdded()],
  Mailer.prototype,
  'send',
  Object.getOwnPropertyDescriptor(Mailer.prototype, 'send'),
);

const store = new RedisNotificationDedupeStore(await connectRedis(), {
  prefix: 'e2e:',
  leaseMs: Number(options['lease-ms']),
  commandTimeoutMs: Number(options['command-timeout-ms']),
});

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        PayoutsModule.forRoot({
          baseUrl: 'http://127.0.0.1:9/v1',
          apiKey: 'e2e-api-key',
          accessToken: 'e2e-access-token',
          notifications: { verification: 'none', dedupe: { store } },
        }),
      ],
      providers: options.mailer ? [CardEvents, Mailer] : [CardEvents],
    }),
  ],
  AppModule,
);

const app = await NestFactory.create(AppModule, adapter === 'fastify' ? new FastifyAdapter() : new ExpressAdapter(), {
  logger: ['error'],
});
await app.listen(0, '127.0.0.1');
console.log(`listening ${app.getHttpServer().address().port}`);
