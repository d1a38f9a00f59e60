/*
 * Injection tokens of one `PayoutsModule` registration. Each registration is its own module instance, so these
 * tokens are private to it: only the exported `PayoutsService` (or, for a named registration, the token of
 * `getPayoutsServiceToken(name)`) is seen by the importing module.
 */

/** The payouts client's slice of the validated options (`PayoutsClientConfig`). */
export const PAYOUTS_CLIENT_CONFIG = Symbol('PAYOUTS_CLIENT_CONFIG');

/** The notification route's slice of the validated options (`NotificationsConfig`, or `false` for no route). */
export const NOTIFICATIONS_CONFIG = Symbol('NOTIFICATIONS_CONFIG');

/** The `NotificationDedupeStore` in use: the one given in the options, or the built-in in-memory store. */
export const NOTIFICATION_DEDUPE_STORE = Symbol('NOTIFICATION_DEDUPE_STORE');

/** What a verified, valid notification is handed to (`NotificationDispatcher`): inline handlers by default. */
export const NOTIFICATION_DISPATCHER = Symbol('NOTIFICATION_DISPATCHER');

/** Receives what the package does, for metrics and traces (`PayoutsInstrumentation`); a no-op by default. */
export const PAYOUTS_INSTRUMENTATION = Symbol('PAYOUTS_INSTRUMENTATION');

/**
 * The account of the unnamed registration: what its handlers see in `context.account`, and the name that
 * `@OnPaymentMethod…({ account })` and `getPayoutsServiceToken()` give it. `name: 'default'` is the same registration.
 */
export const DEFAULT_PAYOUTS_ACCOUNT = 'default';

/** This registration's account: its `name`, or `DEFAULT_PAYOUTS_ACCOUNT` for the unnamed registration. */
export const PAYOUTS_ACCOUNT = Symbol('PAYOUTS_ACCOUNT');

/**
 * Every registration of the app (`PayoutsRegistrations`). Unlike the tokens above it is shared: one provider per
 * application, which each registration records itself into at bootstrap.
 */
export const PAYOUTS_REGISTRATIONS = Symbol('PAYOUTS_REGISTRATIONS');
