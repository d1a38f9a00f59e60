import type { Provider, Type } from '@nestjs/common';
import type { PayoutsRegistry } from './accounts/payouts-registry.js';
import { EventsInstrumentation } from './common/events/events-instrumentation.js';
import { PayoutsEventEmitter } from './common/events/payouts-event-emitter.js';
import { NOOP_INSTRUMENTATION } from './common/noop-instrumentation.js';
import { type PayoutsConfig, resolvePayoutsConfig } from './config/payouts-config.js';
import type { PayoutsHealthSource } from './interfaces/payouts-health-source.interface.js';
import type { NotificationDedupeStore } from './interfaces/notification-dedupe-store.interface.js';
import type { PayoutsModuleOptions } from './interfaces/payouts-module-options.interface.js';
import type { PayoutsInstrumentation } from './interfaces/payouts-instrumentation.interface.js';
import { InMemoryNotificationDedupeStore } from './notifications/dedupe/in-memory-notification-dedupe-store.js';
import type { NotificationDispatcher } from './interfaces/notification-dispatcher.interface.js';
import { DiscoveredNotificationHandlers } from './notifications/dispatch/discovered-notification-handlers.js';
import { InlineNotificationDispatcher } from './notifications/dispatch/inline-notification-dispatcher.js';
import { createNotificationDispatcherHost } from './notifications/dispatch/notification-dispatcher-host.js';
import { NotificationHandlersExplorer } from './notifications/dispatch/notification-handlers.explorer.js';
import { bindNotificationsRoute } from './notifications/http/notifications-controller.factory.js';
import { NotificationReceiver } from './notifications/http/notification-receiver.js';
import type { NotificationsConfig } from './notifications/notifications-config.js';
import { MODULE_OPTIONS_TOKEN } from './payouts.module-definition.js';
import {
  NOTIFICATION_DEDUPE_STORE,
  NOTIFICATION_DISPATCHER,
  NOTIFICATIONS_CONFIG,
  PAYOUTS_ACCOUNT,
  PAYOUTS_CLIENT_CONFIG,
  PAYOUTS_EVENTS,
  PAYOUTS_INSTRUMENTATION,
  PAYOUTS_REGISTRATIONS,
} from './payouts.constants.js';
import { PayoutsService } from './payouts/payouts.service.js';

/** The whole validated configuration; only the providers below read it, each feature gets its own slice. */
const PAYOUTS_CONFIG = Symbol('PAYOUTS_CONFIG');

/** How the app registered the module: the method, and the `name` beside the options, still unchecked. */
export interface PayoutsRegistrationSource {
  readonly method: 'forRoot' | 'forRootAsync';
  readonly name: string | undefined;
}

/** The tokens a registration exports, decided by its `name` before any options factory runs. */
export interface PayoutsRegistrationExports {
  /** Its `PayoutsService`. */
  readonly service: Type<PayoutsService> | string;
  /** Its dispatcher's queue, or `null`. */
  readonly queue: string;
  /** The health sources of its dedupe store and its queue, or `null`. */
  readonly dedupeHealth: string;
  readonly queueHealth: string;
  /** Its instrumentation, for the add-ons that record on its behalf. */
  readonly instrumentation: string;
}

/**
 * The providers of one registration. Every seam is a provider under a token, so a test can replace it with
 * `overrideProvider` and Nest runs its lifecycle hooks (a shared store's start-up checks and shutdown, a queue's
 * workers).
 */
export function createPayoutsProviders(
  controller: Type<unknown>,
  source: PayoutsRegistrationSource,
  exported: PayoutsRegistrationExports,
): Provider[] {
  return [
    {
      provide: PAYOUTS_CONFIG,
      inject: [MODULE_OPTIONS_TOKEN, PAYOUTS_REGISTRATIONS],
      useFactory: (options: PayoutsModuleOptions, registry: PayoutsRegistry): PayoutsConfig => {
        const config = resolvePayoutsConfig(options, source.name);
        // Every registration records itself before any `onModuleInit`, so handler discovery sees them all.
        registry.record({
          account: config.account,
          registeredWith: registeredWith(source),
          notificationsPath: config.notifications ? config.notifications.path : undefined,
          notificationsStorage: config.notifications
            ? config.notifications.dispatcher?.storageOf?.(config.account)
            : undefined,
        });
        // Nest maps routes after async providers resolve, so the path can come from `forRootAsync`.
        bindNotificationsRoute(controller, config.notifications);
        return config;
      },
    },
    { provide: PAYOUTS_ACCOUNT, inject: [PAYOUTS_CONFIG], useFactory: (config: PayoutsConfig) => config.account },
    { provide: PAYOUTS_CLIENT_CONFIG, inject: [PAYOUTS_CONFIG], useFactory: (config: PayoutsConfig) => config.client },
    {
      provide: NOTIFICATIONS_CONFIG,
      inject: [PAYOUTS_CONFIG],
      useFactory: (config: PayoutsConfig) => config.notifications,
    },
    {
      provide: NOTIFICATION_DEDUPE_STORE,
      inject: [NOTIFICATIONS_CONFIG],
      useFactory: (config: NotificationsConfig | false): NotificationDedupeStore => {
        if (!config) return new InMemoryNotificationDedupeStore();
        const { dedupe } = config;
        if (dedupe.store) return dedupe.store;
        return new InMemoryNotificationDedupeStore({ ttlMs: dedupe.ttlMs, maxEntries: dedupe.maxEntries });
      },
    },
    { provide: PAYOUTS_EVENTS, useFactory: () => new PayoutsEventEmitter() },
    {
      provide: PAYOUTS_INSTRUMENTATION,
      inject: [PAYOUTS_CONFIG, PAYOUTS_EVENTS],
      useFactory: ({ account, telemetry }: PayoutsConfig, events: PayoutsEventEmitter) => {
        const instrumentation = telemetry ? telemetry.instrument({ account }) : NOOP_INSTRUMENTATION;
        return new EventsInstrumentation(instrumentation, events, account);
      },
    },
    NotificationHandlersExplorer,
    DiscoveredNotificationHandlers,
    InlineNotificationDispatcher,
    {
      provide: NOTIFICATION_DISPATCHER,
      inject: [
        NOTIFICATIONS_CONFIG,
        PAYOUTS_ACCOUNT,
        DiscoveredNotificationHandlers,
        InlineNotificationDispatcher,
        PAYOUTS_INSTRUMENTATION,
      ],
      // The inline dispatcher has no lifecycle hook: Nest would call one twice, on both providers of the instance.
      useFactory: (
        config: NotificationsConfig | false,
        account: string,
        handlers: DiscoveredNotificationHandlers,
        inline: InlineNotificationDispatcher,
        instrumentation: PayoutsInstrumentation,
      ): NotificationDispatcher | Promise<NotificationDispatcher> =>
        config && config.dispatcher
          ? config.dispatcher.create(createNotificationDispatcherHost(account, handlers, instrumentation))
          : inline,
    },
    {
      provide: exported.queue,
      inject: [NOTIFICATION_DISPATCHER],
      useFactory: (dispatcher: NotificationDispatcher): object | null => dispatcher.queue ?? null,
    },
    {
      provide: exported.queueHealth,
      inject: [NOTIFICATION_DISPATCHER],
      useFactory: (dispatcher: NotificationDispatcher): PayoutsHealthSource | null => dispatcher.health ?? null,
    },
    {
      provide: exported.dedupeHealth,
      inject: [NOTIFICATION_DEDUPE_STORE],
      useFactory: (store: NotificationDedupeStore): PayoutsHealthSource | null => store.health ?? null,
    },
    NotificationReceiver,
    { provide: exported.service, useClass: PayoutsService },
    { provide: exported.instrumentation, useExisting: PAYOUTS_INSTRUMENTATION },
  ];
}

/** `PayoutsModule.forRoot({ name: 'eu' })`, as the app wrote it, to name a registration in error messages. */
function registeredWith({ method, name }: PayoutsRegistrationSource): string {
  return `PayoutsModule.${method}(${name === undefined ? '' : `{ name: '${name}' }`})`;
}
