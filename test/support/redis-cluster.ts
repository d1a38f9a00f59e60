import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findExecutable, RedisServer } from './redis-server.js';

const CLUSTER_READY_TIMEOUT_MS = 15_000;

/**
 * A real Redis Cluster of three masters (`redis-server` processes of the test's own, persistence off), the hash
 * slots spread over them by `redis-cli --cluster create`.
 */
export class RedisCluster {
  private constructor(readonly nodes: readonly RedisServer[]) {}

  static async start(): Promise<RedisCluster> {
    const redisCli = findExecutable('redis-cli');
    if (!redisCli) throw new Error("redis-cli is not installed (it comes with Debian's redis-server package)");
    const nodes: RedisServer[] = [];
    const cluster = new RedisCluster(nodes);
    try {
      for (let index = 0; index < 3; index++) {
        nodes.push(await RedisServer.start({ args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000'] }));
      }
      const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
      await promisify(execFile)(redisCli, ['--cluster', 'create', ...addresses, '--cluster-yes'], { timeout: 30_000 });
      await cluster.#waitUntilReady(redisCli);
      return cluster;
    } catch (error) {
      await cluster.close();
      throw error;
    }
  }

  /** `redis://127.0.0.1:<port>` of each node. */
  get urls(): string[] {
    return this.nodes.map((node) => node.url);
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.close()));
  }

  /**
   * Every node must see the whole cluster as `ok`, and all must agree on which node holds each slot, before clients
   * connect: a node can report `ok` while its map of the slots is still being gossiped, and a client then gets `MOVED`
   * back and forth between two nodes.
   */
  async #waitUntilReady(redisCli: string): Promise<void> {
    const deadline = Date.now() + CLUSTER_READY_TIMEOUT_MS;
    const waitFor = async (ready: () => Promise<boolean>) => {
      while (!(await ready())) {
        if (Date.now() > deadline) throw new Error(`the cluster is not ready within ${CLUSTER_READY_TIMEOUT_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    for (const node of this.nodes) {
      await waitFor(async () => {
        const { stdout } = await promisify(execFile)(redisCli, ['-p', String(node.port), 'CLUSTER', 'INFO']);
        return stdout.includes('cluster_state:ok');
      });
    }
    await waitFor(async () => {
      // `--cluster check` exits with 1 while it finds an error, such as nodes that disagree.
      const check = await promisify(execFile)(redisCli, [
        '--cluster',
        'check',
        `127.0.0.1:${this.nodes[0]!.port}`,
      ]).then(
        ({ stdout }) => stdout,
        () => '',
      );
      return check.includes('All nodes agree about slots configuration') && !check.includes('[ERR]');
    });
  }
}
