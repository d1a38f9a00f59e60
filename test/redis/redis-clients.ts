import { Cluster, Redis } from 'ioredis';
import type { RedisClientLike } from '../../lib/redis/index.js';
import { createClient, createCluster } from 'redis';

export type RedisClientKind = 'node-redis' | 'ioredis';
export const REDIS_CLIENTS: readonly RedisClientKind[] = ['node-redis', 'ioredis'];

export interface RedisCredentials {
  username?: string;
  password?: string;
}

/** A connected client of either library, as an application passes it to the store. */
export interface TestRedisClient {
  /** The client itself; typed as the store takes it, so this file proves both libraries' clients fit. */
  readonly client: RedisClientLike;
  /** Sends one command for the test's own checks; on a cluster, its key is its second word (`SET key …`). */
  command(...args: string[]): Promise<unknown>;
  /** Errors the client emitted (connection lost, and so on), which an application must listen to. */
  readonly errors: Error[];
  close(): void;
}

export async function connectRedisClient(
  kind: RedisClientKind,
  url: string,
  credentials: RedisCredentials = {},
): Promise<TestRedisClient> {
  const errors: Error[] = [];
  if (kind === 'node-redis') {
    const client = createClient({ url, ...credentials });
    client.on('error', (error: Error) => errors.push(error));
    await client.connect();
    return { client, errors, command: (...args) => client.sendCommand(args), close: () => client.destroy() };
  }
  const client = new Redis(url, { ...credentials, lazyConnect: true });
  client.on('error', (error: Error) => errors.push(error));
  await client.connect();
  return {
    client,
    errors,
    command: (command, ...args) => client.call(command!, ...args),
    close: () => client.disconnect(),
  };
}

/** A connected cluster client of either library, given the URLs of the cluster's nodes. */
export async function connectRedisClusterClient(
  kind: RedisClientKind,
  urls: readonly string[],
): Promise<TestRedisClient> {
  const errors: Error[] = [];
  if (kind === 'node-redis') {
    const client = createCluster({ rootNodes: urls.map((url) => ({ url })) });
    client.on('error', (error: Error) => errors.push(error));
    await client.connect();
    return {
      client,
      errors,
      // Routed by the command's key, its second word: without one node-redis sends the command to a node at random,
      // and after each MOVED to another at random, so about one command in a thousand ran out of redirections.
      command: (...args) => client.sendCommand(args[1], false, args),
      close: () => client.destroy(),
    };
  }
  const nodes = urls.map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) }));
  const client = new Cluster(nodes, { lazyConnect: true });
  client.on('error', (error: Error) => errors.push(error));
  await client.connect();
  return {
    client,
    errors,
    command: (command, ...args) => client.call(command!, ...args),
    close: () => client.disconnect(),
  };
}
