import { type DynamicModule, Module } from '@nestjs/common';
import { HttpModule } from '@nestjs/axios';
import { DiscoveryModule } from '@nestjs/core';
import { createNotificationsController } from './notifications/http/notifications-controller.factory.js';
import {
  PayoutsConfigurableModule,
  type PayoutsModuleAsyncOptions,
  type PayoutsModuleForRootOptions,
} from './payouts.module-definition.js';
import { createPayoutsProviders } from './payouts.providers.js';
import { PayoutsService } from './payouts/payouts.service.js';

/**
 * Gives an application an injectable `PayoutsService` and, unless `notifications: false`,
 * a verified route that delivers payment-method notifications to `@OnPaymentMethod…()` handlers.
 */
@Module({
  imports: [HttpModule, DiscoveryModule],
  exports: [PayoutsService],
})
export class PayoutsModule extends PayoutsConfigurableModule {
  static override forRoot(options: PayoutsModuleForRootOptions): DynamicModule {
    return withRegistration(super.forRoot(options));
  }

  static override forRootAsync(options: PayoutsModuleAsyncOptions): DynamicModule {
    return withRegistration(super.forRootAsync(options));
  }
}

/**
 * Each registration gets its own controller class, given its path once the options are known, and its own
 * providers, so two apps in one process never share a path or a store.
 */
function withRegistration(definition: DynamicModule): DynamicModule {
  const controller = createNotificationsController();
  return {
    ...definition,
    controllers: [controller],
    providers: [...(definition.providers ?? []), ...createPayoutsProviders(controller)],
  };
}
