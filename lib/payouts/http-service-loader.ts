import type { HttpService } from '@nestjs/axios';
import type { LazyModuleLoader } from '@nestjs/core';

/**
 * Gets the `HttpService` of a fresh `HttpModule.register({})`: a private axios instance, so interceptors and defaults
 * an app sets on the global one never see the credentials. Nest builds it at the first call to the payouts API, not
 * at boot: importing @nestjs/axios and axios costs an app about 50 ms of start-up, and many apps only receive
 * notifications, or send their first payout long after they start.
 */
export async function loadHttpService(lazyModules: LazyModuleLoader): Promise<HttpService> {
  const { HttpModule, HttpService } = await import('@nestjs/axios');
  const moduleRef = await lazyModules.load(() => HttpModule.register({}), { logger: false });
  return moduleRef.get(HttpService);
}
