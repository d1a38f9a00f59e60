export { RedisNotificationDedupeStore } from './redis-notification-dedupe-store.js';
export type { RedisNotificationDedupeStoreOptions } from './redis-notification-dedupe-store-options.js';
export type { IoRedisLike, NodeRedisClientLike, NodeRedisClusterLike, RedisClientLike } from './redis-client.js';
