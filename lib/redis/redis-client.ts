/**
 * The shapes of the clients the Redis store accepts, structural so that the package never imports either library.
 * Only the methods the store calls are described; a real client has many more.
 */

/** The per-command options of node-redis that the store sets. */
export interface NodeRedisCommandOptions {
  /** node-redis 6's own limit on the command, in milliseconds; `0` for none. node-redis 5 has none, and ignores it. */
  timeout?: number;
}

/** A node-redis (`redis` v5 or later) client from `createClient()`, connected. */
export interface NodeRedisClientLike {
  /** Whether the client is connected and its commands are written at once (not kept in its offline queue). */
  readonly isReady?: boolean;
  // `object`: node-redis 5's options type has no `timeout`, so naming ours here would refuse its clients.
  sendCommand(args: string[], options?: object): Promise<unknown>;
}

/** A node-redis (`redis` v5 or later) cluster client from `createCluster()`, connected. */
export interface NodeRedisClusterLike {
  readonly isReady?: boolean;
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
    options?: object,
  ): Promise<unknown>;
  getSlotMaster(slot: number): unknown;
}

/** An ioredis (v5.3 or later) `Redis` or `Cluster` instance, connected. */
export interface IoRedisLike {
  call(command: string, ...args: string[]): Promise<unknown>;
  /** `'ready'` while a `Redis` instance writes its commands to its socket at once. */
  readonly status?: string;
  /** A `Redis` instance's socket. */
  readonly stream?: { cork(): void; uncork(): void };
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

/**
 * Tells the clients apart by their shape; `undefined` for anything else. `commandTimeoutMs` is the store's limit on
 * each operation.
 */
export function redisCommandSender(client: unknown, commandTimeoutMs: number): RedisCommandSender | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const candidate = client as Partial<IoRedisLike & NodeRedisClusterLike>;
  // ioredis also has a `sendCommand`, taking its own command objects, so `call` is checked first.
  if (typeof candidate.call === 'function') return ioRedisSender(client as IoRedisLike);
  if (typeof candidate.sendCommand !== 'function') return undefined;
  if (typeof candidate.getSlotMaster === 'function')
    return nodeRedisClusterSender(client as NodeRedisClusterLike, commandTimeoutMs);
  return nodeRedisSender(client as NodeRedisClientLike, commandTimeoutMs);
}

/**
 * ioredis writes each command to its socket as it is sent, one `write` system call each. The store's commands of one
 * turn of the event loop go out in one instead, as node-redis writes all of its own: the first of them corks the
 * socket of a connected `Redis`, uncorked at the end of the turn (`setImmediate`), so that one system call per turn
 * replaces two per notification. Each command still goes through ioredis's own `call`, with its own reply, error and
 * offline queue, and the socket is left as it was found; the application's commands of that turn go out in the same
 * write. A `Cluster` picks a node's socket per command itself: its commands go one by one.
 */
function ioRedisSender(client: IoRedisLike): RedisCommandSender {
  // ioredis routes a cluster command by its keys itself.
  const cluster = (client as { isCluster?: unknown }).isCluster === true;
  let corked = false;
  const uncork = (stream: { uncork(): void }) => {
    corked = false;
    stream.uncork();
  };
  const send = ([command, ...args]: string[]) => {
    if (!corked && !cluster && client.status === 'ready' && client.stream !== undefined) {
      const stream = client.stream;
      stream.cork();
      corked = true;
      setImmediate(uncork, stream);
    }
    return client.call(command!, ...args);
  };
  return { cluster, keyCommand: (_key, args) => send(args), serverCommand: send };
}

/**
 * The options of the store's node-redis commands. node-redis's own command timeout (5 seconds by default in
 * node-redis 6) only limits how long a command waits in the client's queue before it is written, and costs an
 * `AbortSignal.timeout()`, its listeners and their garbage per command: about 20 µs of CPU per notification on the
 * bench, most of what node-redis cost over ioredis. While the client is connected its queue is written out at the
 * end of the event loop's turn, so the store's commands go without one; the store bounds each operation by
 * `commandTimeoutMs` itself. While the client is not ready, a command waits in its offline queue: it leaves it,
 * never sent, at twice `commandTimeoutMs`, once the store has given up on it (the store's own timer, which fires
 * first, answers the caller). node-redis 5 has no command timeout: there such a command is sent once the client
 * reconnects, as it always was there (an abort signal instead would do, but node-redis 5.0.0
 * stops writing any command after two queued ones abort together). The client's own settings stay as they are for
 * every other command.
 */
function nodeRedisCommandOptions(
  client: { readonly isReady?: boolean },
  commandTimeoutMs: number,
): () => NodeRedisCommandOptions {
  const connected: NodeRedisCommandOptions = Object.freeze({ timeout: 0 });
  const offline: NodeRedisCommandOptions = Object.freeze({ timeout: 2 * commandTimeoutMs });
  return () => (client.isReady === true ? connected : offline);
}

function nodeRedisSender(client: NodeRedisClientLike, commandTimeoutMs: number): RedisCommandSender {
  const options = nodeRedisCommandOptions(client, commandTimeoutMs);
  return {
    cluster: false,
    keyCommand: (_key, args) => client.sendCommand(args, options()),
    serverCommand: (args) => client.sendCommand(args, options()),
  };
}

function nodeRedisClusterSender(client: NodeRedisClusterLike, commandTimeoutMs: number): RedisCommandSender {
  const options = nodeRedisCommandOptions(client, commandTimeoutMs);
  return {
    cluster: true,
    keyCommand: (key, args) => client.sendCommand(key, false, args, options()),
    serverCommand: (args) => client.sendCommand(undefined, true, args, options()),
  };
}
