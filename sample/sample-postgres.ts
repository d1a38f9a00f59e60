import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';

/** A PostgreSQL cluster of the sample's own for the payout ledger: a temporary folder, a Unix socket, no TCP port. */
export interface SamplePostgres {
  readonly pool: pg.Pool;
  /** Where its socket is, to print. */
  readonly dir: string;
  close(): Promise<void>;
}

const DEBIAN_ROOT = '/usr/lib/postgresql';

/** The folder of `initdb` and `postgres`: on the PATH, else Debian's (off the PATH); `undefined` when not installed. */
export function findPostgresBin(): string | undefined {
  const onPath = (process.env.PATH ?? '').split(delimiter).find((dir) => isExecutable(join(dir, 'initdb')));
  if (onPath && isExecutable(join(onPath, 'postgres'))) return onPath;
  let versions: string[];
  try {
    versions = readdirSync(DEBIAN_ROOT).sort((a, b) => Number(b) - Number(a));
  } catch {
    return undefined;
  }
  return versions
    .map((version) => join(DEBIAN_ROOT, version, 'bin'))
    .find((bin) => isExecutable(join(bin, 'initdb')) && isExecutable(join(bin, 'postgres')));
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function startSamplePostgres(bin: string): Promise<SamplePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'payouts-sample-pg-'));
  // initdb and postgres refuse root: run as the postgres user, which Debian's package creates.
  const owner = process.getuid?.() === 0 ? postgresUser() : undefined;
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const options = { cwd: dir, ...(owner && { uid: owner.uid, gid: owner.gid }) };
  const data = join(dir, 'data');
  const initdb = spawn(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync'], {
    ...options,
    stdio: 'ignore',
  });
  const [code] = (await once(initdb, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`initdb exited with ${code}`);
  const settings = ['listen_addresses=', `unix_socket_directories=${dir}`, 'fsync=off', 'max_connections=50'];
  const server = spawn(join(bin, 'postgres'), ['-D', data, ...settings.flatMap((setting) => ['-c', setting])], {
    ...options,
    stdio: 'ignore',
  });
  const pool = new pg.Pool({ host: dir, user: 'postgres', database: 'postgres', max: 10 });
  pool.on('error', () => undefined);
  const close = async () => {
    await pool.end().catch(() => undefined);
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilAnswering(pool, server);
  } catch (error) {
    await close();
    throw error;
  }
  return { pool, dir, close };
}

async function waitUntilAnswering(pool: pg.Pool, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error('postgres exited at start');
    if (
      await pool.query('SELECT 1').then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('postgres did not answer within 15 s');
}

/** PostgreSQL's fast shutdown (SIGINT), by PID. */
async function stop(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = once(server, 'exit');
  process.kill(server.pid!, 'SIGINT');
  await exited;
}

function postgresUser(): { uid: number; gid: number } {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === 'postgres') return { uid: Number(uid), gid: Number(gid) };
  }
  throw new Error('running as root, and there is no "postgres" user to run PostgreSQL as');
}
