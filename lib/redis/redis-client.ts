/**
 * The shapes of the clients the Redis store accepts, structural so that the package never imports either library.
 * Only the methods the store calls are described; a real client has many more.
 */

/** A node-redis (`redis` v5 or later) client from `createClient()`, connected. */
export interface NodeRedisClientLike {
  sendCommand(args: string[]): Promise<unknown>;
}

/** A node-redis (`redis` v5 or later) cluster client from `createCluster()`, connected. */
export interface NodeRedisClusterLike {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  getSlotMaster(slot: number): unknown;
}

/** An ioredis (v5.3 or later) `Redis` or `Cluster` instance, connected. */
export interface IoRedisLike {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** Any client the store accepts: node-redis or ioredis, single server or cluster. */
export type RedisClientLike = NodeRedisClientLike | NodeRedisClusterLike | IoRedisLike;

/** Sends one command, whatever the client; the one place where the two libraries differ. */
export interface RedisCommandSender {
  /** Whether keys may live on different nodes (a cluster client), so that one script cannot take any two keys. */
  readonly cluster: boolean;
  /** A command on the node that holds `key` (the first key of the command). */
  keyCommand(key: string, args: string[]): Promise<unknown>;
  /** A command about the server, such as `CONFIG GET`, on any node. */
  serverCommand(args: string[]): Promise<unknown>;
}

/** Tells the clients apart by their shape; `undefined` for anything else. */
export function redisCommandSender(client: unknown): RedisCommandSender | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const candidate = client as Partial<IoRedisLike & NodeRedisClusterLike>;
  // ioredis also has a `sendCommand`, taking its own command objects, so `call` is checked first.
  if (typeof candidate.call === 'function') return ioRedisSender(client as IoRedisLike);
  if (typeof candidate.sendCommand !== 'function') return undefined;
  if (typeof candidate.getSlotMaster === 'function') return nodeRedisClusterSender(client as NodeRedisClusterLike);
  return nodeRedisSender(client as NodeRedisClientLike);
}

function ioRedisSender(client: IoRedisLike): RedisCommandSender {
  const send = ([command, ...args]: string[]) => client.call(command!, ...args);
  // ioredis routes a cluster command by its keys itself.
  const cluster = (client as { isCluster?: unknown }).isCluster === true;
  return { cluster, keyCommand: (_key, args) => send(args), serverCommand: send };
}

function nodeRedisSender(client: NodeRedisClientLike): RedisCommandSender {
  return {
    cluster: false,
    keyCommand: (_key, args) => client.sendCommand(args),
    serverCommand: (args) => client.sendCommand(args),
  };
}

function nodeRedisClusterSender(client: NodeRedisClusterLike): RedisCommandSender {
  return {
    cluster: true,
    keyCommand: (key, args) => client.sendCommand(key, false, args),
    serverCommand: (args) => client.sendCommand(undefined, true, args),
  };
}
