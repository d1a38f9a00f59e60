export { PayoutsModule } from './payouts.module.js';
export type { PayoutsModuleAsyncOptions, PayoutsModuleForRootOptions } from './payouts.module-definition.js';
export type {
  AccessTokenSource,
  PayoutsModuleExtras,
  PayoutsModuleOptions,
  PayoutsOptionsFactory,
  PayoutsRetryOptions,
} from './payouts-options.interface.js';
export { PayoutsService } from './payouts/payouts.service.js';
export { PayoutsError } from './errors/payouts.error.js';
export { PayoutsConfigError } from './errors/payouts-config.error.js';
export type {
  NotificationRequestInfo,
  NotificationsOptions,
  NotificationVerificationOptions,
} from './notifications/notifications-options.interface.js';
