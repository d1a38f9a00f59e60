import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { HttpModule } from '@nestjs/axios';
import { DiscoveryModule } from '@nestjs/core';
import { PAYOUTS_CONFIG } from './payouts.constants.js';
import { resolvePayoutsConfig } from './payouts-config.js';
import {
  MODULE_OPTIONS_TOKEN,
  PayoutsConfigurableModule,
  type PayoutsModuleAsyncOptions,
  type PayoutsModuleForRootOptions,
} from './payouts.module-definition.js';
import type { PayoutsModuleOptions } from './payouts-options.interface.js';
import { PayoutsService } from './payouts/payouts.service.js';
import {
  bindNotificationsRoute,
  createNotificationsController,
} from './notifications/notifications-controller.factory.js';
import { NOTIFICATIONS_PROVIDERS } from './notifications/notifications.providers.js';

/**
 * Gives an application an injectable `PayoutsService` and, unless `notifications: false`,
 * a verified route that delivers payment-method notifications to `@OnPaymentMethod…()` handlers.
 */
@Module({
  // A private axios instance: interceptors and defaults an app sets on the global one never see the credentials.
  imports: [HttpModule.register({}), DiscoveryModule],
  providers: [PayoutsService, ...NOTIFICATIONS_PROVIDERS],
  exports: [PayoutsService],
})
export class PayoutsModule extends PayoutsConfigurableModule {
  static override forRoot(options: PayoutsModuleForRootOptions): DynamicModule {
    return withRoute(super.forRoot(options));
  }

  static override forRootAsync(options: PayoutsModuleAsyncOptions): DynamicModule {
    return withRoute(super.forRootAsync(options));
  }
}

/**
 * Each registration gets its own controller class, given its path once the options are known
 * (Nest maps routes after async providers resolve), so two apps in one process never share a path.
 */
function withRoute(definition: DynamicModule): DynamicModule {
  const controller = createNotificationsController();
  const configProvider: Provider = {
    provide: PAYOUTS_CONFIG,
    inject: [MODULE_OPTIONS_TOKEN],
    useFactory: (options: PayoutsModuleOptions) => {
      const config = resolvePayoutsConfig(options);
      bindNotificationsRoute(controller, config.notifications);
      return config;
    },
  };
  return {
    ...definition,
    controllers: [controller],
    providers: [...(definition.providers ?? []), configProvider],
  };
}
