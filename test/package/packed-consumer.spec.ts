import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNodeProcess } from '../node-process.js';

const root = join(import.meta.dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** Every entry point a user imports, with one export it must have; an add-on adds its line here. */
const ENTRY_POINTS: { specifier: string; exportName: string }[] = [
  { specifier: 'nestjs-payouts', exportName: 'PayoutsModule' },
  { specifier: 'nestjs-payouts/testing', exportName: 'FakePayoutsService' },
  { specifier: 'nestjs-payouts/redis', exportName: 'RedisNotificationDedupeStore' },
  { specifier: 'nestjs-payouts/opentelemetry', exportName: 'payoutsOpenTelemetry' },
  { specifier: 'nestjs-payouts/queue', exportName: 'payoutsQueue' },
  { specifier: 'nestjs-payouts/postgres', exportName: 'payoutLedgerPostgres' },
];

const isOptional = (name: string) => manifest.peerDependenciesMeta?.[name]?.optional === true;
/** The peers every user installs; the consumer gets these and nothing else. */
const REQUIRED_PEERS = Object.keys(manifest.peerDependencies).filter((name) => !isOptional(name));
/** Packages of the optional add-ons, absent from the consumer. */
const ABSENT = [
  ...new Set([...Object.keys(manifest.peerDependencies).filter(isOptional), 'bullmq', '@opentelemetry/api']),
];

/** `npm pack` of the repository, once for the file: the consumers below each extract it. */
let tarball: string | undefined;
function packed(): string {
  if (tarball) return tarball;
  const destination = mkdtempSync(join(tmpdir(), 'payouts-packed-'));
  const pack = ['pack', '--json', '--pack-destination', destination];
  const [{ filename }] = JSON.parse(execFileSync('npm', pack, { cwd: root, encoding: 'utf8', timeout: 60_000 })) as [
    { filename: string },
  ];
  tarball = join(destination, filename);
  return tarball;
}
afterAll(() => tarball && rmSync(dirname(tarball), { recursive: true, force: true }));

/**
 * The packed tarball, extracted into a consumer app's node_modules beside its required peers only (links to this
 * repository's copies, so no network is needed), in a directory outside the repository.
 */
function createConsumer(): string {
  const consumer = mkdtempSync(join(tmpdir(), 'payouts-consumer-'));
  const installed = join(consumer, 'node_modules', 'nestjs-payouts');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', packed(), '-C', installed, '--strip-components=1']);
  for (const name of REQUIRED_PEERS) linkFromRepository(consumer, name);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  return consumer;
}

function linkFromRepository(consumer: string, name: string): void {
  const link = join(consumer, 'node_modules', name);
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(join(root, 'node_modules', name), link, 'dir');
}

/**
 * This repository's bullmq, copied into the consumer (a link would make Node look for ioredis from the repository's
 * copy, which finds the repository's ioredis), its own dependencies linked; ioredis is left out.
 */
function installBullMqWithoutIoRedis(consumer: string): void {
  const bullmq = join(consumer, 'node_modules', 'bullmq');
  cpSync(join(root, 'node_modules', 'bullmq'), bullmq, { recursive: true });
  const { dependencies = {} } = JSON.parse(readFileSync(join(bullmq, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  for (const name of Object.keys(dependencies)) {
    if (!existsSync(join(bullmq, 'node_modules', name))) linkFromRepository(consumer, name);
  }
}

/** A consumer app without the optional add-ons. */
describe('the packed package in a consumer app without the optional add-ons', () => {
  let consumer: string;

  beforeAll(() => {
    consumer = createConsumer();
  }, 90_000);
  afterAll(() => consumer && rmSync(consumer, { recursive: true, force: true }));

  const runIn = async (type: 'module' | 'commonjs', code: string) => {
    const run = await runNodeProcess([`--input-type=${type}`, '-e', code], { cwd: consumer, timeoutMs: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout) as unknown;
  };

  it('has none of the optional packages', async () => {
    const resolvable = await runIn(
      'commonjs',
      `console.log(JSON.stringify(${JSON.stringify(ABSENT)}.filter((name) => {
        try { require.resolve(name); return true; } catch { return false; }
      })))`,
    );
    expect(resolvable).toEqual([]);
  });

  it.each(ENTRY_POINTS)('loads $specifier by import', async ({ specifier, exportName }) => {
    const names = await runIn(
      'module',
      `import 'reflect-metadata'; console.log(JSON.stringify(Object.keys(await import('${specifier}'))));`,
    );
    expect(names).toContain(exportName);
  });

  it.each(ENTRY_POINTS)('loads $specifier by require', async ({ specifier, exportName }) => {
    const names = await runIn(
      'commonjs',
      `require('reflect-metadata'); console.log(JSON.stringify(Object.keys(require('${specifier}'))));`,
    );
    expect(names).toContain(exportName);
  });

  it('loads nestjs-payouts/queue without bullmq, and payoutsQueue() says what to install', async () => {
    const thrown = await runIn(
      'module',
      `import { payoutsQueue } from 'nestjs-payouts/queue';
      try { payoutsQueue({ connection: { host: '127.0.0.1', port: 6379 } }); console.log('null'); }
      catch (error) { console.log(JSON.stringify([error.name, error.message])); }`,
    );
    expect(thrown).toEqual([
      'PayoutsConfigError',
      'PayoutsModule option "notifications.dispatcher" is invalid: expected payoutsQueue() with the bullmq package ' +
        'installed (npm install bullmq).',
    ]);
  });

  it.each([
    ['module', `await import('nestjs-payouts/payout-runs')`],
    ['commonjs', `require('nestjs-payouts/payout-runs')`],
  ] as const)(
    'refuses nestjs-payouts/payout-runs by %s, naming bullmq, ioredis and the install command',
    async (type, load) => {
      const run = await runNodeProcess(
        [`--input-type=${type}`, '-e', `try { ${load}; } catch (error) { console.log(error.message); }`],
        { cwd: consumer, timeoutMs: 20_000 },
      );
      expect(run.stdout).toBe(
        'nestjs-payouts/payout-runs needs the bullmq package (bullmq, and ioredis with bullmq 6): ' +
          'npm install bullmq ioredis\n',
      );
    },
  );

  it.each([
    ['module', `await import('nestjs-payouts/terminus')`],
    ['commonjs', `require('nestjs-payouts/terminus')`],
  ] as const)(
    'refuses nestjs-payouts/terminus by %s, naming @nestjs/terminus and the install command',
    async (type, load) => {
      const run = await runNodeProcess(
        [`--input-type=${type}`, '-e', `try { ${load}; } catch (error) { console.log(error.message); }`],
        { cwd: consumer, timeoutMs: 20_000 },
      );
      expect(run.stdout).toBe(
        'nestjs-payouts/terminus needs the @nestjs/terminus package: npm install @nestjs/terminus\n',
      );
    },
  );

  it('runs the CLI without bullmq, whose queue command says what to install', async () => {
    const cli = join(consumer, 'node_modules', 'nestjs-payouts', 'dist', 'cli.js');
    const help = await runNodeProcess([cli, '--help'], { cwd: consumer, timeoutMs: 20_000 });
    const queue = await runNodeProcess([cli, 'queue', 'failed', '--redis-url', 'redis://127.0.0.1:1'], {
      cwd: consumer,
      timeoutMs: 20_000,
    });
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toContain('queue       List and replay');
    expect([queue.code, queue.stderr]).toEqual([
      2,
      'Error: the queue command needs the bullmq package: npm install bullmq\n',
    ]);
  });

  it('runs the postgres command without pg, saying what to install, and payoutLedgerPostgres() names it', async () => {
    const cli = join(consumer, 'node_modules', 'nestjs-payouts', 'dist', 'cli.js');
    const migrate = await runNodeProcess([cli, 'postgres', 'migrate', '--database-url', 'postgresql://127.0.0.1:1/x'], {
      cwd: consumer,
      timeoutMs: 20_000,
    });
    const refused = await runIn(
      'module',
      `import { payoutLedgerPostgres } from 'nestjs-payouts/postgres';
      try { payoutLedgerPostgres({}); console.log('null'); }
      catch (error) { console.log(JSON.stringify([error.name, error.message])); }`,
    );
    expect([migrate.code, migrate.stdout, migrate.stderr]).toEqual([
      2,
      '',
      'Error: nestjs-payouts postgres needs the pg package: npm install pg\n',
    ]);
    expect(refused).toEqual([
      'PayoutsConfigError',
      'payoutLedgerPostgres option "pool" is invalid: expected a pool of node-postgres (npm install pg; new Pool({ ' +
        'connectionString })).',
    ]);
  });

  it('boots without @opentelemetry/api, and with payoutsOpenTelemetry() fails saying what to install', async () => {
    const booted = await runIn(
      'module',
      `import 'reflect-metadata';
      import { Module } from '@nestjs/common';
      import { NestFactory } from '@nestjs/core';
      import { PayoutsModule } from 'nestjs-payouts';
      import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
      const boot = async (extra) => {
        class AppModule {}
        const options = { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', accessToken: 't', notifications: false };
        Module({ imports: [PayoutsModule.forRoot({ ...options, ...extra })] })(AppModule);
        try {
          await (await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false })).close();
          return 'booted';
        } catch (error) {
          return error.message;
        }
      };
      console.log(JSON.stringify([await boot({}), await boot({ telemetry: payoutsOpenTelemetry() })]));`,
    );
    expect(booted).toEqual([
      'booted',
      'PayoutsModule option "telemetry" is invalid: expected payoutsOpenTelemetry() with the @opentelemetry/api ' +
        'package installed (npm install @opentelemetry/api).',
    ]);
  });
});

/**
 * bullmq 6 opens its connections with ioredis, which it leaves to the app to install; bullmq 5 (the Nest 11 leg's)
 * depends on ioredis itself, so there is no such app to try there.
 */
const bullmqMajor = Number(
  (
    JSON.parse(readFileSync(join(root, 'node_modules', 'bullmq', 'package.json'), 'utf8')) as { version: string }
  ).version.split('.')[0],
);

describe.runIf(bullmqMajor >= 6)('the packed package in a consumer app with bullmq 6 but without ioredis', () => {
  let consumer: string;

  beforeAll(() => {
    consumer = createConsumer();
    installBullMqWithoutIoRedis(consumer);
  }, 90_000);
  afterAll(() => consumer && rmSync(consumer, { recursive: true, force: true }));

  it('refuses payoutsQueue() with connection options, naming the install command, instead of hanging at boot', async () => {
    const run = await runNodeProcess(
      [
        '--input-type=module',
        '-e',
        `import { payoutsQueue } from 'nestjs-payouts/queue';
        try { payoutsQueue({ connection: { host: '127.0.0.1', port: 6379 } }); console.log('null'); }
        catch (error) { console.log(JSON.stringify([error.name, error.message])); }`,
      ],
      { cwd: consumer, timeoutMs: 20_000 },
    );

    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout)).toEqual([
      'PayoutsConfigError',
      'payoutsQueue option "connection" is invalid: expected connection options with the ioredis package installed, ' +
        'with which bullmq 6 opens its connections (npm install ioredis), or a client of your own.',
    ]);
  });

  it('has the queue command say what to install', async () => {
    const cli = join(consumer, 'node_modules', 'nestjs-payouts', 'dist', 'cli.js');
    const run = await runNodeProcess([cli, 'queue', 'failed', '--redis-url', 'redis://127.0.0.1:1'], {
      cwd: consumer,
      timeoutMs: 20_000,
    });

    expect([run.code, run.stdout, run.stderr]).toEqual([
      2,
      '',
      'Error: the queue command needs the ioredis package: npm install ioredis\n',
    ]);
  });
});

/** Payout runs with their peers (bullmq and ioredis, linked from this repository) but without pg. */
describe('the packed package in a consumer app with bullmq and ioredis but without pg', () => {
  let consumer: string;

  beforeAll(() => {
    consumer = createConsumer();
    linkFromRepository(consumer, 'bullmq');
    linkFromRepository(consumer, 'ioredis');
  }, 90_000);
  afterAll(() => consumer && rmSync(consumer, { recursive: true, force: true }));

  it.each([
    ['module', `const runs = await import('nestjs-payouts/payout-runs');`],
    ['commonjs', `const runs = require('nestjs-payouts/payout-runs');`],
  ] as const)('loads nestjs-payouts/payout-runs by %s, pg not installed', async (type, load) => {
    const code =
      `${type === 'module' ? "import 'reflect-metadata';" : "require('reflect-metadata');"} ${load} ` +
      `let pg = 'absent'; try { require.resolve('pg'); pg = 'found'; } catch {} ` +
      `console.log(JSON.stringify([typeof runs.PayoutRunsModule, pg]));`;
    const run = await runNodeProcess(
      [
        `--input-type=${type}`,
        '-e',
        type === 'module'
          ? `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/'); ${code}`
          : code,
      ],
      { cwd: consumer, timeoutMs: 20_000 },
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(['function', 'absent']);
  });
});
