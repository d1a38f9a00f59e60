import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/postgres-suite.js';
import { PostgresServer } from '../support/postgres-server.js';

/** The real user id a process runs as, from /proc. */
function uidOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('Uid:'))!;
  return Number(line.split(/\s+/)[1]);
}

describeWithPostgres('the test support for PostgreSQL', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    server = await PostgresServer.start({ durable: true });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  const query = async (text: string, database = 'postgres') => {
    const client = new pg.Client(server.connection(database));
    await client.connect();
    try {
      return (await client.query(text)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  };

  it('answers over the Unix socket of its own directory only, never as root', async () => {
    expect(await query('SELECT 1 + 1 AS two')).toEqual([{ two: 2 }]);
    expect(await query("SELECT current_setting('listen_addresses') AS listen")).toEqual([{ listen: '' }]);
    expect(await query("SELECT current_setting('unix_socket_directories') AS dir")).toEqual([{ dir: server.dir }]);
    expect(uidOf(server.pid!)).not.toBe(0);
    const client = new pg.Client({ connectionString: server.url() });
    await client.connect();
    expect((await client.query('SELECT current_user AS who')).rows).toEqual([{ who: 'postgres' }]);
    await client.end();
  });

  it('keeps what was committed over a stop and a restart, and refuses connections while stopped', async () => {
    const database = await server.createDatabase('restart_check');
    await query('CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (1), (2)', database);
    const firstPid = server.pid;
    await server.stop();
    expect(server.pid).toBeUndefined();
    await expect(query('SELECT 1', database)).rejects.toThrow(/ENOENT|ECONNREFUSED/);
    await server.restart();
    expect(server.pid).not.toBe(firstPid);
    expect(await query('SELECT id FROM kept ORDER BY id', database)).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('keeps what was committed over a kill -9 of the postmaster, and ends the connections it had', async () => {
    const database = await server.createDatabase('crash_check');
    await query('CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (7)', database);
    const open = new pg.Client(server.connection(database));
    await open.connect();
    const lost = new Promise<Error>((resolve) => open.on('error', resolve));
    await server.kill();
    expect(await lost).toBeInstanceOf(Error);
    await server.restart();
    expect(await query('SELECT id FROM kept', database)).toEqual([{ id: 7 }]);
    await open.end().catch(() => undefined);
  });
});
