import type { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { AddressInfo } from 'node:net';
import { type CommandHandler, runChild } from '../child-main.js';
import { ADAPTERS, type AdapterName } from '../settings.js';
import { argValue } from '../command-line.js';

/**
 * Every Nest bench server is the same app shell on the adapter named by `--adapter=express|fastify`, answering the
 * runner's `commands` besides `memory`.
 */
export function serveNestApp(
  rootModule: Type<unknown>,
  commands: Readonly<Record<string, CommandHandler>> = {},
): Promise<void> {
  return runChild(async () => {
    const adapter = adapterFromArgs();
    const app: INestApplication = await NestFactory.create(
      rootModule,
      adapter === 'fastify' ? new FastifyAdapter() : new ExpressAdapter(),
      { logger: false },
    );
    await app.listen(0, '127.0.0.1');
    return {
      port: (app.getHttpServer().address() as AddressInfo).port,
      commands,
      close: () => app.close(),
    };
  });
}

function adapterFromArgs(): AdapterName {
  const value = argValue('adapter');
  const adapter = ADAPTERS.find((name) => name === value);
  if (!adapter) throw new Error(`expected --adapter=${ADAPTERS.join('|')}`);
  return adapter;
}
