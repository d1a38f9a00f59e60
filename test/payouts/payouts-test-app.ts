import {
  Body,
  Controller,
  type DynamicModule,
  type INestApplication,
  type LoggerService,
  Module,
  Post,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { afterEach, beforeEach } from 'vitest';
import { PayoutsModule } from 'nestjs-payouts';
import type { PayoutsModuleOptions } from 'nestjs-payouts';
import type { CreatePayoutRequest } from 'nestjs-payouts';
import { PayoutsService } from 'nestjs-payouts';
import { MockPayoutsApi } from 'nestjs-payouts/testing';
import type { AdapterName } from '../notifications/notifications-test-app.js';
import { PayoutsApiStub } from './payouts-api-stub.js';

export const API_KEY = 'test-api-key-5b1e9c0d7a';
export const ACCESS_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0.static-token-4f8a';

/** Module options against `baseUrl` with test credentials, tiny retry delays and no notification route. */
export function payoutsOptions(baseUrl: string, overrides: Partial<PayoutsModuleOptions> = {}): PayoutsModuleOptions {
  return {
    baseUrl,
    apiKey: API_KEY,
    accessToken: ACCESS_TOKEN,
    retries: { baseDelayMs: 1, maxDelayMs: 5 },
    notifications: false,
    ...overrides,
  };
}

/** A merchant endpoint that passes its body to `createPayout`; errors reach Nest's exception handler. */
@Controller('merchant')
class MerchantPayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  @Post('payouts')
  async create(@Body() request: CreatePayoutRequest): Promise<unknown> {
    const result = await this.payouts.createPayout(request);
    return result.body;
  }
}

export interface PayoutsTestApp {
  app: INestApplication;
  payouts: PayoutsService;
  /** Where the app listens, e.g. `http://127.0.0.1:40123`. */
  url: string;
}

/** How `startPayoutsApp` builds the app besides the payouts module. */
export interface PayoutsTestAppOptions {
  /** Default `express`. */
  adapter?: AdapterName;
  /** Controllers besides the merchant endpoint. */
  controllers?: Type[];
}

/** A real Nest application importing `payoutsModule`, listening on a free loopback port. */
export async function startPayoutsApp(
  payoutsModule: DynamicModule,
  logger: LoggerService | false = false,
  { adapter = 'express', controllers = [] }: PayoutsTestAppOptions = {},
): Promise<PayoutsTestApp> {
  @Module({ imports: [payoutsModule], controllers: [MerchantPayoutsController, ...controllers] })
  class MerchantAppModule {}

  const httpAdapter = adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter();
  const app = await NestFactory.create(MerchantAppModule, httpAdapter, { logger, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  return { app, payouts: app.get(PayoutsService), url: await app.getUrl() };
}

/** `startPayoutsApp` with `PayoutsModule.forRoot(payoutsOptions(baseUrl, overrides))`. */
export function startPayoutsAppFor(
  baseUrl: string,
  overrides: Partial<PayoutsModuleOptions> = {},
  logger: LoggerService | false = false,
  appOptions: PayoutsTestAppOptions = {},
): Promise<PayoutsTestApp> {
  return startPayoutsApp(PayoutsModule.forRoot(payoutsOptions(baseUrl, overrides)), logger, appOptions);
}

/** A fresh payouts API stub for each test; after it, the app the test started (if any) and the stub are closed. */
export function usePayoutsTestbed(): { stub: PayoutsApiStub; started: PayoutsTestApp | undefined } {
  const testbed = { stub: undefined as unknown as PayoutsApiStub, started: undefined as PayoutsTestApp | undefined };
  beforeEach(async () => {
    testbed.stub = await PayoutsApiStub.start();
  });
  afterEach(async () => {
    await testbed.started?.app.close();
    testbed.started = undefined;
    await testbed.stub.close();
  });
  return testbed;
}

/**
 * The shipped `MockPayoutsApi`, accepting the test credentials, fresh for each test; after it, the app the test
 * started (if any) and the mock are closed. For tests that need raw control of the replies, see `usePayoutsTestbed`.
 */
export function useMockPayoutsTestbed(): { mock: MockPayoutsApi; started: PayoutsTestApp | undefined } {
  const testbed = { mock: undefined as unknown as MockPayoutsApi, started: undefined as PayoutsTestApp | undefined };
  beforeEach(async () => {
    testbed.mock = await MockPayoutsApi.start({ apiKey: API_KEY, accessToken: ACCESS_TOKEN });
  });
  afterEach(async () => {
    await testbed.started?.app.close();
    testbed.started = undefined;
    await testbed.mock.close();
  });
  return testbed;
}
