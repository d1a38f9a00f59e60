import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const READY_TIMEOUT_MS = 10_000;

/** The `redis-server` executable on the PATH, or `undefined` when none is installed. */
export function findRedisServer(): string | undefined {
  return findExecutable('redis-server');
}

/** An executable on the PATH, such as `redis-cli` (installed with Debian's `redis-server`). */
export function findExecutable(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Whether `path` is a file this process may run. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Every server still running, killed by PID if the test process exits without stopping them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface RedisServerOptions {
  /** More `redis-server` arguments, such as `['--requirepass', 'secret']`. */
  args?: string[];
}

/**
 * A real `redis-server` of the test's own, on a free loopback port with persistence off and its working files in a
 * temporary directory. It can be stopped and started again on the same port, to test an outage.
 */
export class RedisServer {
  #child: ChildProcess | undefined;

  private constructor(
    readonly executable: string,
    readonly port: number,
    readonly dir: string,
    private readonly args: string[],
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const executable = findRedisServer();
    if (!executable) throw new Error('redis-server is not installed (on Debian: apt-get install redis-server)');
    // The port was free a moment ago; another spec's server may have taken it since (spec files run side by side),
    // and then redis-server exits at once (it logs why on its standard output): it is tried again on another port.
    for (let attempt = 1; ; attempt += 1) {
      const server = new RedisServer(executable, await freePort(), mkdtempSync(join(tmpdir(), 'payouts-redis-')), [
        ...(options.args ?? []),
      ]);
      try {
        await server.restart();
        return server;
      } catch (error) {
        await server.close();
        if (attempt === 3 || !/it exited/.test(String(error))) throw error;
      }
    }
  }

  /** `redis://127.0.0.1:<port>`. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** PID of the running server; `undefined` while stopped. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the server (again) on its port; an empty dataset, as persistence is off. */
  async restart(): Promise<void> {
    if (this.#child) throw new Error('redis-server is already running');
    const settings = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--daemonize', 'no'];
    const persistenceOff = ['--save', '', '--appendonly', 'no'];
    const child = spawn(this.executable, [...settings, ...persistenceOff, '--loglevel', 'warning', ...this.args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    running.add(child);
    this.#child = child;
    child.once('exit', () => running.delete(child));
    try {
      await waitUntilAnswering(this.port, child);
    } catch (error) {
      await this.stop();
      throw new Error(`redis-server did not start on port ${this.port}: ${String(error)} ${stderr}`.trim(), {
        cause: error,
      });
    }
  }

  /**
   * Stops the server by PID with SIGSTOP, until `resume()`: its connections stay open and nothing answers on them, as
   * with a Redis that hangs.
   */
  hang(): void {
    process.kill(this.pid!, 'SIGSTOP');
  }

  /** Lets a server that hangs (`hang()`) answer again, with SIGCONT. */
  resume(): void {
    process.kill(this.pid!, 'SIGCONT');
  }

  /** Runs `body` while the server hangs, and lets it answer again afterwards, whether `body` succeeds or throws. */
  async whileHung<T>(body: () => Promise<T>): Promise<T> {
    this.hang();
    try {
      return await body();
    } finally {
      this.resume();
    }
  }

  /** Kills the server by PID with SIGKILL, as a crash would, and waits until it has exited. */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    process.kill(child.pid!, 'SIGKILL');
    await exited;
  }

  /** Stops the server and removes its directory. */
  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Polls with `PING` until the server answers, it exits, or the deadline passes. */
async function waitUntilAnswering(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error('it exited');
    // `+PONG`, or `-NOAUTH` from a server started with a password: up and serving.
    if (await ping(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no reply within ${READY_TIMEOUT_MS} ms`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    // Redis replies `+PONG`, or an error: `-NOAUTH …` with a password, `-LOADING …` while it is not ready yet.
    // Another server that took the port replies otherwise.
    socket.once('data', (reply: Buffer) => {
      socket.destroy();
      const text = reply.toString('latin1');
      resolve(text === '+PONG\r\n' || text.startsWith('-NOAUTH '));
    });
    socket.once('timeout', () => socket.destroy());
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}
