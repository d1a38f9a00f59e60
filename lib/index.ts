import 'reflect-metadata';

export { PayoutsModule } from './payouts.module.js';
export type { PayoutsModuleAsyncOptions, PayoutsModuleForRootOptions } from './payouts.module-definition.js';
export type {
  AccessTokenSource,
  PayoutsModuleExtras,
  PayoutsModuleOptions,
  PayoutsOptionsFactory,
  PayoutsRetryOptions,
} from './payouts-options.interface.js';

// Payouts
export { PayoutsService } from './payouts/payouts.service.js';
export type {
  CreatePayoutRequest,
  OtherPayoutMethod,
  PayoutAmount,
  WalletPayoutBeneficiary,
  WalletPayoutDetails,
  WalletPayoutMethod,
  WalletPayoutRequest,
} from './payouts/create-payout-request.interface.js';
export type { PayoutResult } from './payouts/payout-result.interface.js';
export { PayoutRequestDto } from './payouts/dto/payout-request.dto.js';
export { WalletPayoutMethodDto } from './payouts/dto/wallet-payout-method.dto.js';
export { PayoutBeneficiaryDto } from './payouts/dto/payout-beneficiary.dto.js';
export { WalletPayoutDetailsDto } from './payouts/dto/wallet-payout-details.dto.js';
export { PayoutAmountDto } from './payouts/dto/payout-amount.dto.js';
export { OtherPayoutMethodDto } from './payouts/dto/other-payout-method.dto.js';
export { OtherPayoutBeneficiaryDto } from './payouts/dto/other-payout-beneficiary.dto.js';

// Notifications
export {
  OnPaymentMethodAdded,
  OnPaymentMethodEvent,
  OnPaymentMethodRemoved,
} from './notifications/notification-handler.decorators.js';
export { PaymentMethodEventType } from './notifications/payment-method-event-type.js';
export {
  AddedCardPaymentMethod,
  NotificationCard,
  NotificationPaymentMethod,
  NotificationShopper,
  PaymentMethodNotification,
} from './notifications/payment-method-notification.js';
export type { NotificationContext } from './notifications/notification-context.interface.js';
export type {
  NotificationClaim,
  NotificationDedupeStore,
} from './notifications/notification-dedupe-store.interface.js';
export {
  InMemoryNotificationDedupeStore,
  type InMemoryNotificationDedupeStoreOptions,
} from './notifications/in-memory-notification-dedupe-store.js';
export type {
  NotificationDedupeOptions,
  NotificationRequestInfo,
  NotificationsOptions,
  NotificationVerificationOptions,
} from './notifications/notifications-options.interface.js';

// Errors
export { PayoutsError } from './errors/payouts.error.js';
export { PayoutsConfigError } from './errors/payouts-config.error.js';
export { PayoutValidationError, type PayoutFieldError } from './errors/payout-validation.error.js';
export { PayoutsApiError } from './errors/payouts-api.error.js';
export { PayoutsNetworkError } from './errors/payouts-network.error.js';
export { PayoutOutcomeUnknownError } from './errors/payout-outcome-unknown.error.js';
export { PayoutsAccessTokenError } from './errors/payouts-access-token.error.js';
export { NotificationHandlerScopeError } from './errors/notification-handler-scope.error.js';
export { RedisDedupeStoreError, type RedisDedupeStoreOperation } from './errors/redis-dedupe-store.error.js';
