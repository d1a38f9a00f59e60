import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { PayoutsRegistryModule } from './accounts/payouts-registry.module.js';
import { getNotificationsQueueToken } from './accounts/notifications-queue.token.js';
import { getPayoutsInstrumentationToken } from './accounts/payouts-instrumentation.token.js';
import { getPayoutsServiceToken } from './accounts/payouts-service.token.js';
import { getPayoutsHealthSourceToken } from './accounts/payouts-health-source.token.js';
import { createNotificationsController } from './notifications/http/notifications-controller.factory.js';
import {
  PayoutsConfigurableModule,
  type PayoutsModuleAsyncOptions,
  type PayoutsModuleForRootOptions,
} from './payouts.module-definition.js';
import { createPayoutsProviders, type PayoutsRegistrationSource } from './payouts.providers.js';

/**
 * Gives an application an injectable `PayoutsService` and, unless `notifications: false`,
 * a verified route that delivers payment-method notifications to `@OnPaymentMethod…()` handlers.
 * Registered once per merchant account; a named registration exports `getPayoutsServiceToken(name)`.
 */
@Module({
  // `PayoutsService` gets its private axios instance, from `HttpModule.register({})`, at its first call.
  imports: [DiscoveryModule, PayoutsRegistryModule],
})
export class PayoutsModule extends PayoutsConfigurableModule {
  static override forRoot(options: PayoutsModuleForRootOptions): DynamicModule {
    // Known here, so the registration gets no controller at all; a factory's answer comes too late for that.
    const routeless = options?.notifications === false;
    return withRegistration(super.forRoot(options), { method: 'forRoot', name: options?.name }, routeless);
  }

  static override forRootAsync(options: PayoutsModuleAsyncOptions): DynamicModule {
    return withRegistration(super.forRootAsync(options), { method: 'forRootAsync', name: options.name }, false);
  }
}

/**
 * Each registration gets its own controller class, given its path once the options are known, and its own
 * providers, so two registrations, or two apps in one process, never share a path, a token cache or a store.
 * Only the service, the dispatcher's queue, the health sources and the instrumentation are exported, under tokens that `name` decides before any options
 * factory runs.
 */
function withRegistration(
  definition: DynamicModule,
  source: PayoutsRegistrationSource,
  routeless: boolean,
): DynamicModule {
  const controller = createNotificationsController();
  const exported = {
    service: getPayoutsServiceToken(source.name),
    queue: getNotificationsQueueToken(source.name),
    dedupeHealth: getPayoutsHealthSourceToken('dedupe-store', source.name),
    queueHealth: getPayoutsHealthSourceToken('notifications-queue', source.name),
    instrumentation: getPayoutsInstrumentationToken(source.name),
  };
  return {
    ...definition,
    // Without notifications, the class of a `forRootAsync()` registration stays, with no path: Nest maps nothing.
    controllers: routeless ? [] : [controller],
    providers: [...(definition.providers ?? []), ...createPayoutsProviders(controller, source, exported)],
    exports: [exported.service, exported.queue, exported.dedupeHealth, exported.queueHealth, exported.instrumentation],
  };
}
