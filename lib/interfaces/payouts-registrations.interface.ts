/** One `PayoutsModule` registration, as the other registrations of the same app see it. */
export interface PayoutsRegistration {
  /** Its `name`, or `'default'` for the unnamed registration. */
  readonly account: string;
  /** How the app registers it, for messages, such as `PayoutsModule.forRoot({ name: 'eu' })`. */
  readonly registeredWith: string;
  /** Its `notifications.path` as configured, or `undefined` for `notifications: false`. */
  readonly notificationsPath: string | undefined;
  /** Where its dispatcher stores notifications (a queue), or `undefined` when it handles them as they come. */
  readonly notificationsStorage?: string;
}

/** The registrations of one app; complete once the app's providers are instantiated, so from `onModuleInit` on. */
export interface PayoutsRegistrations {
  readonly all: readonly PayoutsRegistration[];
  find(account: string): PayoutsRegistration | undefined;
}
