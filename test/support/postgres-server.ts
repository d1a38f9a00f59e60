import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { findExecutable, isExecutable } from './redis-server.js';

const READY_TIMEOUT_MS = 20_000;
/** The socket's name is `.s.PGSQL.<port>` in the cluster's own directory: the number only names the file. */
const SOCKET_PORT = 5432;
/** Where Debian's `postgresql` package puts the server's programs, off the PATH. */
const DEBIAN_ROOT = '/usr/lib/postgresql';

/** The folder holding `initdb` and `postgres`: the PATH first, then Debian's; `undefined` when none is installed. */
export function findPostgresBin(): string | undefined {
  const initdb = findExecutable('initdb');
  if (initdb && findExecutable('postgres')) return join(initdb, '..');
  let versions: string[];
  try {
    versions = readdirSync(DEBIAN_ROOT);
  } catch {
    return undefined;
  }
  // The newest major version first.
  for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
    const bin = join(DEBIAN_ROOT, version, 'bin');
    if (isExecutable(join(bin, 'initdb')) && isExecutable(join(bin, 'postgres'))) return bin;
  }
  return undefined;
}

/** Every server still running, stopped at once (SIGQUIT: its backends too) if the test process exits first. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGQUIT');
});

export interface PostgresServerOptions {
  /**
   * Commits reach the disk (`fsync`, `synchronous_commit`, `full_page_writes` on), for a test that kills the server
   * and counts on what it committed. Off by default: faster, and a clean stop keeps everything anyway.
   */
  durable?: boolean;
  /** More settings, such as `{ max_connections: '50' }`. */
  settings?: Record<string, string>;
}

/**
 * A real PostgreSQL cluster of the test's own, created by `initdb` in a temporary directory and reached only over a
 * Unix socket in that directory (`listen_addresses = ''`). Run as the `postgres` user when the test runs as root,
 * since `initdb` and `postgres` refuse root. It can be stopped, killed and started again on the same data, to test
 * an outage or a crash.
 */
export class PostgresServer {
  #child: ChildProcess | undefined;

  private constructor(
    readonly bin: string,
    readonly dir: string,
    private readonly owner: { uid: number; gid: number } | undefined,
    private readonly settings: string[],
  ) {}

  static async start(options: PostgresServerOptions = {}): Promise<PostgresServer> {
    const bin = findPostgresBin();
    if (!bin) throw new Error('PostgreSQL is not installed (on Debian: apt-get install postgresql)');
    const dir = mkdtempSync(join(tmpdir(), 'payouts-pg-'));
    const owner = process.getuid?.() === 0 ? postgresUser() : undefined;
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const durability = options.durable ? [] : ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];
    const settings = [
      'listen_addresses=',
      `unix_socket_directories=${dir}`,
      `port=${SOCKET_PORT}`,
      'max_connections=200',
      'shared_buffers=32MB',
      ...durability,
      ...Object.entries(options.settings ?? {}).map(([name, value]) => `${name}=${value}`),
    ];
    const server = new PostgresServer(bin, dir, owner, settings);
    try {
      await server.run('initdb', ['-D', server.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
      await server.restart();
    } catch (error) {
      await server.close();
      throw error;
    }
    return server;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** Connection settings for `pg` (`new pg.Client(server.connection)`), to the database given or `postgres`. */
  connection(database = 'postgres'): pg.ClientConfig {
    return { host: this.dir, port: SOCKET_PORT, user: 'postgres', database };
  }

  /** A `postgresql://` URL of the socket, as a CLI or `DATABASE_URL` takes it. */
  url(database = 'postgres'): string {
    return `postgresql://postgres@${encodeURIComponent(this.dir)}:${SOCKET_PORT}/${database}`;
  }

  /** PID of the running postmaster; `undefined` while stopped. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** A new database, so that specs sharing a server do not see each other's tables. */
  async createDatabase(name: string): Promise<string> {
    const client = new pg.Client(this.connection());
    await client.connect();
    try {
      await client.query(`CREATE DATABASE "${name}"`);
    } finally {
      await client.end();
    }
    return name;
  }

  /** Starts the server (again) on its data directory; what was committed before is there. */
  async restart(): Promise<void> {
    if (this.#child) throw new Error('postgres is already running');
    // After a SIGKILL, the old backends leave on their own once they see the postmaster gone; until they have, the
    // new postmaster refuses to start ("pre-existing shared memory block is still in use"): it is tried again.
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      try {
        await this.startOnce(deadline);
        return;
      } catch (error) {
        if (!/still in use|already running|lock file/i.test(String(error)) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  private async startOnce(deadline: number): Promise<void> {
    const args = ['-D', this.dataDir, ...this.settings.flatMap((setting) => ['-c', setting])];
    const child = spawn(join(this.bin, 'postgres'), args, {
      cwd: this.dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(this.owner && { uid: this.owner.uid, gid: this.owner.gid }),
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    running.add(child);
    this.#child = child;
    child.once('exit', () => running.delete(child));
    try {
      await this.waitUntilAnswering(child, deadline);
    } catch (error) {
      await this.kill();
      throw new Error(`postgres did not start in ${this.dir}: ${String(error)} ${stderr}`.trim(), { cause: error });
    }
  }

  /** Polls with a connection and `SELECT 1` until the server answers, it exits, or the deadline passes. */
  private async waitUntilAnswering(child: ChildProcess, deadline: number): Promise<void> {
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error('it exited');
      const client = new pg.Client({ ...this.connection(), connectionTimeoutMillis: 1000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch {
        // Not ready yet: the socket is missing or the server is starting up.
      } finally {
        await client.end().catch(() => undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no reply within ${READY_TIMEOUT_MS} ms`);
  }

  /**
   * Stops the server by PID and waits until it has exited: SIGINT (the default) is PostgreSQL's fast shutdown (open
   * transactions rolled back, everything committed kept), SIGTERM waits for the clients to leave.
   */
  async stop(signal: 'SIGINT' | 'SIGTERM' = 'SIGINT'): Promise<void> {
    await this.signal(signal);
  }

  /** Kills the postmaster by PID with SIGKILL, as a crash would, and waits until it has exited. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** Stops the server and removes its directory. */
  async close(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    process.kill(child.pid!, signal);
    await exited;
  }

  /** Runs one of the cluster's programs to its end, as the cluster's owner. */
  private async run(program: string, args: string[]): Promise<void> {
    const child = spawn(join(this.bin, program), args, {
      cwd: this.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(this.owner && { uid: this.owner.uid, gid: this.owner.gid }),
    });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`${program} exited with ${code}: ${output}`);
  }
}

/** The `postgres` user's ids, which Debian's package creates; the server refuses to run as root. */
function postgresUser(): { uid: number; gid: number } {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === 'postgres') return { uid: Number(uid), gid: Number(gid) };
  }
  throw new Error('running as root, and there is no "postgres" user to run PostgreSQL as (initdb refuses root)');
}
