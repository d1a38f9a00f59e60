import 'reflect-metadata';

export { PayoutsModule } from './payouts.module.js';
export { InjectPayouts } from './accounts/inject-payouts.decorator.js';
export { getPayoutsServiceToken } from './accounts/payouts-service.token.js';
export { getPayoutsHealthSourceToken } from './accounts/payouts-health-source.token.js';
export type {
  PayoutsHealthComponent,
  PayoutsHealthSource,
  PayoutsQueueFigures,
  PayoutsWorkerState,
} from './interfaces/payouts-health-source.interface.js';
export type { AccessTokenFetchOutcome } from './payouts/access-token-provider.js';
export { getPayoutsInstrumentationToken } from './accounts/payouts-instrumentation.token.js';
export { DEFAULT_PAYOUTS_ACCOUNT } from './payouts.constants.js';
export type { PayoutsModuleAsyncOptions, PayoutsModuleForRootOptions } from './payouts.module-definition.js';
export type {
  AccessTokenSource,
  PayoutsModuleExtras,
  PayoutsModuleOptions,
  PayoutsOptionsFactory,
  PayoutsRetryOptions,
} from './interfaces/payouts-module-options.interface.js';

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
export type { PayoutsCallOptions } from './payouts/payouts-call-options.interface.js';
export type {
  PayoutsApiMethod,
  PayoutsApiRequest,
  PayoutsQueryValue,
} from './payouts/payouts-api-request.interface.js';
export type { PayoutsApiResponse } from './payouts/payouts-api-response.interface.js';
export type { PayoutsTransportOptions } from './interfaces/payouts-transport-options.interface.js';
export { PayoutsExceptionFilter } from './payouts/payouts-exception.filter.js';
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
  type NotificationHandlerOptions,
} from './notifications/dispatch/notification-handler.decorators.js';
export { PaymentMethodEventType } from './interfaces/payment-method-event-type.js';
export {
  AddedCardPaymentMethod,
  NotificationCard,
  NotificationPaymentMethod,
  NotificationShopper,
  PaymentMethodNotification,
} from './notifications/message/payment-method-notification.js';
export type { NotificationContext, NotificationSource } from './interfaces/notification-context.interface.js';
export type {
  DispatchedNotification,
  NotificationDispatcher,
  NotificationDispatcherFactory,
  NotificationDispatcherHost,
  NotificationDispatchOutcome,
  NotificationFieldProblem,
  NotificationHandlerRef,
} from './interfaces/notification-dispatcher.interface.js';
/** The dedupe store of a registration, for `overrideProvider` in tests. */
export { NOTIFICATION_DEDUPE_STORE } from './payouts.constants.js';
export type {
  NotificationClaim,
  NotificationDedupeStore,
  NotificationHandlerRecord,
  NotificationRecordedClaim,
} from './interfaces/notification-dedupe-store.interface.js';
export {
  InMemoryNotificationDedupeStore,
  type InMemoryNotificationDedupeStoreOptions,
} from './notifications/dedupe/in-memory-notification-dedupe-store.js';
export type {
  NotificationDedupeOptions,
  NotificationRequestInfo,
  NotificationsOptions,
  NotificationVerificationOptions,
} from './interfaces/notifications-options.interface.js';

// Events and telemetry
export type { PayoutsEventListener } from './common/events/payouts-event-emitter.js';
export type {
  PayoutsEvents,
  PayoutsNotificationEvent,
  PayoutsPayoutRunJobEvent,
  PayoutsRequestEvent,
  PayoutsResponseEvent,
} from './interfaces/payouts-events.interface.js';
// What the `telemetry` option takes; `nestjs-payouts/opentelemetry` implements it.
export type {
  NotificationDedupeResult,
  NotificationOutcome,
  NotificationTrace,
  NotificationTraceCarrier,
  PayoutReconcileLookupAnswer,
  PayoutRunJobInfo,
  PayoutRunJobTrace,
  PayoutRunJobOutcome,
  PayoutsAttemptOutcome,
  PayoutsCallOperation,
  PayoutsCallTargetInfo,
  PayoutsCallTrace,
  PayoutsInstrumentation,
  PayoutsTelemetry,
  PayoutsTelemetryRegistration,
} from './interfaces/payouts-instrumentation.interface.js';

// Errors
export { PayoutsError } from './errors/payouts.error.js';
export { PayoutsConfigError, type PayoutsConfigProblem } from './errors/payouts-config.error.js';
export { PayoutValidationError, type PayoutFieldError } from './errors/payout-validation.error.js';
export { PayoutsApiError, type PayoutsApiErrorDetails } from './errors/payouts-api.error.js';
export { PayoutsNetworkError } from './errors/payouts-network.error.js';
export { PayoutOutcomeUnknownError, type PayoutOutcomeUnknownDetails } from './errors/payout-outcome-unknown.error.js';
export { PayoutsAbortedError } from './errors/payouts-aborted.error.js';
export { PayoutsCallOptionsError } from './errors/payouts-call-options.error.js';
export type { PayoutsCallTarget } from './errors/payouts-call-target.js';
export { PayoutsAccessTokenError } from './errors/payouts-access-token.error.js';
export { NotificationHandlerScopeError } from './errors/notification-handler-scope.error.js';
export { RedisDedupeStoreError, type RedisDedupeStoreOperation } from './errors/redis-dedupe-store.error.js';
export { RedisEvictionPolicyError } from './errors/redis-eviction-policy.error.js';
export { NotificationEnqueueError } from './errors/notification-enqueue.error.js';
export {
  PayoutRunEnqueueError,
  type PayoutRunEnqueueItemState,
  type PayoutRunEnqueueItemStatus,
} from './errors/payout-run-enqueue.error.js';
export { NotificationHandlersError } from './errors/notification-handlers.error.js';
export { PayoutRequestConflictError } from './errors/payout-request-conflict.error.js';
export { type PayoutRunDecisionRecorded, PayoutRunResolveError } from './errors/payout-run-resolve.error.js';
export { PayoutLedgerUnavailableError, type PayoutLedgerWritten } from './errors/payout-ledger-unavailable.error.js';
export { PayoutLedgerSchemaError } from './errors/payout-ledger-schema.error.js';

// The payout ledger seam (payout runs' Redis store, nestjs-payouts/postgres)
export type {
  PayoutCountedState,
  PayoutLedger,
  PayoutLedgerBegin,
  PayoutLedgerClaim,
  PayoutLedgerCounts,
  PayoutLedgerDecision,
  PayoutLedgerFactory,
  PayoutLedgerRecord,
  PayoutLedgerState,
  PayoutLedgerUnsettled,
} from './interfaces/payout-ledger.interface.js';
export type {
  PayoutLedgerOutbox,
  PayoutLedgerTransaction,
  PayoutPendingItem,
  PayoutPendingRow,
  PayoutPendingSubscription,
  PayoutPendingWrite,
} from './interfaces/payout-outbox.interface.js';
