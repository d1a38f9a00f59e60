import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** A `redis-server` of the sample's own for queue mode: a free loopback port, nothing saved to disk. */
export interface SampleRedis {
  readonly url: string;
  close(): Promise<void>;
}

/** `undefined` when no `redis-server` is on the PATH. */
export function findRedisServer(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, 'redis-server'), constants.X_OK);
      return join(dir, 'redis-server');
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

export async function startSampleRedis(executable: string): Promise<SampleRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'payouts-sample-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
  const child = spawn(executable, [...args, '--loglevel', 'warning'], { stdio: 'ignore' });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      process.kill(child.pid!, 'SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilAnswering(port, child);
  } catch (error) {
    await close();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, close };
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

async function waitUntilAnswering(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error('redis-server exited at start');
    const answered = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => socket.end(() => resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (answered) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('redis-server did not answer within 10 s');
}
