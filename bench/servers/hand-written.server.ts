import 'reflect-metadata';
import {
  Body,
  type CanActivate,
  ConflictException,
  Controller,
  type ExecutionContext,
  HttpCode,
  Inject,
  Injectable,
  Module,
  Post,
  UnauthorizedException,
  UseGuards,
  ValidationPipe,
} from '@nestjs/common';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { NOTIFICATION_PATH, NOTIFICATION_SECRET } from '../notification-sample.js';
import { serveNestApp } from './nest-server.js';
import { NotificationDto } from './notification-dtos.js';
import { argValue } from '../command-line.js';

/**
 * The anchors: what a careful user would write by hand with the same guarantees as the package's route, in one of
 * three modes (`--mode=memory|redis|queue`, the last two with `--redis-url=…`). Each checks `?token=` in constant
 * time in a guard (before the body is looked at), validates with `ValidationPipe` and the DTOs of route 2, then:
 *
 * - `memory`: a `Map` of the notifications seen, bounded like the package's default store; a re-send of a handled
 *   one is acknowledged, one still being handled gets `409`, and a failed handler forgets the key (`500`).
 * - `redis`: the same on ioredis, with a claim that is a lease: `SET key <claim id> NX PX <lease> GET` claims the key
 *   or reads who holds it (`done`: acknowledged; a claim: `409`), a script marks it done only if the claim is still
 *   this delivery's, and a failed handler releases it with another such script. A plain `SET NX` would acknowledge a
 *   re-send while the first delivery may still fail.
 * - `queue`: `queue.add(name, notification, { jobId })`, as with `@nestjs/bullmq`'s injected `Queue` (BullMQ's own
 *   class here, the same call), with the job options of the package's queue mode; a second add of the same id is a
 *   no-op, which is what recognises a re-send.
 */
const mode = argValue('mode');
const redisUrl = argValue('redis-url');
if (mode !== 'memory' && ((mode !== 'redis' && mode !== 'queue') || !redisUrl)) {
  throw new Error('expected --mode=memory, or --mode=redis|queue with --redis-url=redis://…');
}

const SECRET = Buffer.from(NOTIFICATION_SECRET);

@Injectable()
class TokenGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const token = context.switchToHttp().getRequest<{ query: Record<string, unknown> }>().query['token'];
    const presented = Buffer.from(typeof token === 'string' ? token : '');
    // 401 as the package answers, rather than the 403 of a guard returning false.
    if (presented.length !== SECRET.length || !timingSafeEqual(presented, SECRET)) throw new UnauthorizedException();
    return true;
  }
}

/** The user's own handler, which does nothing, as the package server's. */
@Injectable()
class CardEvents {
  async added(_notification: NotificationDto): Promise<void> {}
}

const dedupeKey = (notification: NotificationDto) =>
  `${notification.eventType}|${notification.shopper.id}|${notification.paymentMethod.id}|${notification.timestamp}`;

/** How each mode makes sure a notification is handled once. */
abstract class OnceOnly {
  abstract receive(notification: NotificationDto): Promise<void>;
}

const IN_FLIGHT = 0;
const HANDLED = 1;
/** As the package's default store, so that both keep as many keys. */
const MAX_ENTRIES = 100_000;

@Injectable()
class InMemoryOnceOnly extends OnceOnly {
  readonly #seen = new Map<string, typeof IN_FLIGHT | typeof HANDLED>();

  constructor(@Inject(CardEvents) private readonly events: CardEvents) {
    super();
  }

  async receive(notification: NotificationDto): Promise<void> {
    const key = dedupeKey(notification);
    const state = this.#seen.get(key);
    if (state === HANDLED) return;
    if (state === IN_FLIGHT) throw new ConflictException('being handled; send it again later');
    this.#seen.set(key, IN_FLIGHT);
    // The oldest key goes first (a Map keeps insertion order).
    if (this.#seen.size > MAX_ENTRIES) this.#seen.delete(this.#seen.keys().next().value!);
    try {
      await this.events.added(notification);
    } catch (error) {
      this.#seen.delete(key);
      throw error;
    }
    this.#seen.set(key, HANDLED);
  }
}

const LEASE_MS = 60_000;
const HANDLED_TTL_MS = 24 * 60 * 60 * 1000;
const DONE = 'done';

/** Marks a key done (`ARGV[2]`, for `ARGV[3]` ms) or releases it (`ARGV[2]` empty) only while it holds `ARGV[1]`. */
const SETTLE_IF_OWNER = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then return redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

type SettlingRedis = import('ioredis').Redis & {
  settleIfOwner(key: string, claim: string, value: string, ttlMs: number): Promise<number>;
};

@Injectable()
class RedisOnceOnly extends OnceOnly {
  constructor(
    @Inject(CardEvents) private readonly events: CardEvents,
    @Inject('REDIS') private readonly redis: SettlingRedis,
  ) {
    super();
  }

  async receive(notification: NotificationDto): Promise<void> {
    const key = `hand:${dedupeKey(notification)}`;
    const claim = randomUUID();
    const holder = await this.redis.set(key, claim, 'PX', LEASE_MS, 'NX', 'GET');
    if (holder === DONE) return;
    if (holder !== null) throw new ConflictException('being handled; send it again later');
    try {
      await this.events.added(notification);
    } catch (error) {
      await this.redis.settleIfOwner(key, claim, '', 0);
      throw error;
    }
    await this.redis.settleIfOwner(key, claim, DONE, HANDLED_TTL_MS);
  }
}

@Injectable()
class QueueOnceOnly extends OnceOnly {
  constructor(@Inject('QUEUE') private readonly queue: import('bullmq').Queue) {
    super();
  }

  async receive(notification: NotificationDto): Promise<void> {
    // BullMQ refuses ':' in a custom id; the timestamp has some.
    const jobId = dedupeKey(notification).replaceAll(':', '.');
    await this.queue.add('notification', notification, { ...JOB_OPTIONS, jobId });
  }
}

/** The options the package's queue mode gives each job (its defaults, and the bench's 1 s retention). */
const JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 1 },
  removeOnFail: false,
} as const;

@Controller(NOTIFICATION_PATH)
@UseGuards(TokenGuard)
class NotificationsController {
  constructor(@Inject(OnceOnly) private readonly onceOnly: OnceOnly) {}

  @Post()
  @HttpCode(200)
  async receive(
    @Body(new ValidationPipe({ transform: true, whitelist: true })) notification: NotificationDto,
  ): Promise<{ ResultCode: number }> {
    await this.onceOnly.receive(notification);
    return { ResultCode: 0 };
  }
}

/** The mode's client, connected before the app listens, as an application would. */
async function modeProviders() {
  if (mode === 'memory') return [{ provide: OnceOnly, useClass: InMemoryOnceOnly }];
  const url = new URL(redisUrl!);
  if (mode === 'redis') {
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl!, { lazyConnect: true }).on('error', (error: Error) =>
      console.error(error.message),
    );
    redis.defineCommand('settleIfOwner', { numberOfKeys: 1, lua: SETTLE_IF_OWNER });
    await redis.connect();
    return [
      { provide: 'REDIS', useValue: redis },
      { provide: OnceOnly, useClass: RedisOnceOnly },
    ];
  }
  const { Queue } = await import('bullmq');
  const queue = new Queue(`bench-hand-written-${argValue('adapter')}`, {
    connection: { host: url.hostname, port: Number(url.port) },
  });
  await queue.waitUntilReady();
  return [
    { provide: 'QUEUE', useValue: queue },
    { provide: OnceOnly, useClass: QueueOnceOnly },
  ];
}

@Module({ controllers: [NotificationsController], providers: [CardEvents, ...(await modeProviders())] })
class AppModule {}

await serveNestApp(AppModule);
