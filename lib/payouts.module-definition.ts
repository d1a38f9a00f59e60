import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { PayoutsModuleExtras, PayoutsModuleOptions } from './interfaces/payouts-module-options.interface.js';

export const {
  ConfigurableModuleClass: PayoutsConfigurableModule,
  MODULE_OPTIONS_TOKEN,
  OPTIONS_TYPE: PAYOUTS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PAYOUTS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PayoutsModuleOptions>({ moduleName: 'Payouts' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createPayoutsOptions')
  // `name` is listed so that it is kept out of the options, like `isGlobal`; `PayoutsModule` reads it.
  .setExtras<PayoutsModuleExtras>({ isGlobal: false, name: undefined }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** What `PayoutsModule.forRoot()` accepts. */
export type PayoutsModuleForRootOptions = typeof PAYOUTS_OPTIONS_TYPE;
/** What `PayoutsModule.forRootAsync()` accepts: `useFactory` + `inject`, `useClass` or `useExisting`. */
export type PayoutsModuleAsyncOptions = typeof PAYOUTS_ASYNC_OPTIONS_TYPE;
