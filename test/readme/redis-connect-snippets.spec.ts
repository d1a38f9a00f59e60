import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithRedis } from '../support/redis-suite.js';
import { RedisServer } from '../support/redis-server.js';
import { type NodeProcessRun, runNodeProcess } from '../node-process.js';
import { compileSnippets, ROOT, typescriptBlocks } from './documentation.js';

/*
 * The Redis snippets of docs/several-instances.md, compiled and run as an app would run them, each in its own Node
 * process: with Redis down at startup the app must fail to start and the process end by itself (not wait at "Starting
 * Nest application…" forever, nor be held open by a client that keeps retrying); with Redis up it starts and shuts
 * down.
 * Needs `npm run build`, as `nestjs-payouts` resolves to the built package, as for the documentation's type check.
 */

const snippets = typescriptBlocks().map(({ code }) => code);

function snippet(client: string): string {
  const found = snippets.filter((code) => code.includes(`from '${client}';`) && code.includes('connectRedis'));
  expect(found).toHaveLength(1);
  return found[0]!;
}

// Each runner prints how the start went and sets the exit code; neither calls process.exit(), so that anything the
// client leaves running keeps the process alive, and the run's time limit turns that into a failure.
const RUNNERS = {
  'node-redis': `
import { NestFactory } from '@nestjs/core';
import { AppModule } from './node-redis.js';
try {
  const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
  await app.init();
  console.log('started');
  await app.close();
} catch (error) {
  console.log(\`failed: \${(error as Error).message}\`);
  process.exitCode = 1;
}
`,
  ioredis: `
import { connectRedis } from './ioredis.js';
try {
  const redis = await connectRedis();
  console.log('started');
  redis.disconnect();
} catch (error) {
  console.log(\`failed: \${(error as Error).message}\`);
  process.exitCode = 1;
}
`,
};
type Client = keyof typeof RUNNERS;

// Generous: the snippets give up within seconds; a hang is what this limit catches.
const RUN_LIMIT_MS = 60_000;
const TEST_LIMIT_MS = RUN_LIMIT_MS + 30_000;

/** A loopback port where nothing listens, so connecting is refused. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the documented Redis snippets at startup', () => {
  // Inside the package, so that `nestjs-payouts` resolves to the built package through its own `exports`.
  const workDir = mkdtempSync(join(ROOT, '.readme-redis-'));

  beforeAll(() => {
    writeFileSync(join(workDir, 'node-redis.ts'), snippet('redis'));
    writeFileSync(join(workDir, 'ioredis.ts'), snippet('ioredis'));
    for (const [client, code] of Object.entries(RUNNERS)) writeFileSync(join(workDir, `run-${client}.ts`), code);
    compileSnippets(workDir, ['*.ts'], 120_000);
  }, 150_000);
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  function start(client: Client, redisUrl: string): Promise<NodeProcessRun> {
    return runNodeProcess([join(workDir, 'dist', `run-${client}.js`)], {
      cwd: ROOT,
      env: {
        ...process.env,
        REDIS_URL: redisUrl,
        PAYOUTS_API_KEY: 'readme-api-key',
        PAYOUTS_ACCESS_TOKEN: 'readme-access-token',
        PAYOUTS_NOTIFICATIONS_SECRET: 'readme-notifications-secret',
      },
      timeoutMs: RUN_LIMIT_MS,
    });
  }

  it.each<[Client, RegExp]>([
    ['node-redis', /^failed: .*ECONNREFUSED/m],
    ['ioredis', /^failed: Connection is closed\./m],
  ])(
    'with %s, fails to start and ends its process when Redis is down',
    async (client, failure) => {
      const run = await start(client, `redis://127.0.0.1:${await deadPort()}`);

      // A process killed at the time limit has no exit code: it hung.
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(failure);
      expect(run.stdout).not.toContain('started');
    },
    TEST_LIMIT_MS,
  );

  describeWithRedis('with Redis up', () => {
    let server: RedisServer;
    beforeAll(async () => {
      server = await RedisServer.start();
    });
    afterAll(async () => {
      await server.close();
    });

    it.each<Client>(['node-redis', 'ioredis'])(
      'with %s, starts and ends its process on shutdown',
      async (client) => {
        const run = await start(client, server.url);

        expect(run).toMatchObject({ code: 0, stdout: 'started\n' });
      },
      TEST_LIMIT_MS,
    );
  });
});
