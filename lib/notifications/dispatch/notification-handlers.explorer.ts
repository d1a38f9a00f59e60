import { Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { NotificationHandlerScopeError } from '../../errors/notification-handler-scope.error.js';
import { ANY_NOTIFICATION_EVENT, NOTIFICATION_HANDLER_METADATA } from './notification-handler.decorators.js';
import { type NotificationHandler, NotificationHandlerTable } from './notification-handler-table.js';
import { PaymentMethodEventType } from '../../interfaces/payment-method-event-type.js';

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];
type HandlerMethod = NotificationHandler['invoke'];

/** Finds the `@OnPaymentMethod…()` methods of every provider and controller of the app, in any module. */
@Injectable()
export class NotificationHandlersExplorer {
  private readonly logger = new Logger('PayoutsNotifications');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  explore(): NotificationHandlerTable {
    const byEventType = new Map<string, NotificationHandler[]>();
    const seen = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      for (const [eventType, handler] of this.handlersOf(wrapper, seen)) {
        byEventType.set(eventType, [...(byEventType.get(eventType) ?? []), handler]);
      }
    }
    const catchAll = byEventType.get(ANY_NOTIFICATION_EVENT) ?? [];
    byEventType.delete(ANY_NOTIFICATION_EVENT);
    for (const [eventType, handlers] of byEventType) {
      byEventType.set(eventType, [...handlers, ...catchAll]);
    }
    this.report(byEventType, catchAll);
    return new NotificationHandlerTable(byEventType, catchAll);
  }

  private *handlersOf(wrapper: InstanceWrapper, seen: Set<object>): Generator<[string, NotificationHandler]> {
    // Aliases (`useExisting`) point at an instance that is found under its own token.
    if (wrapper.isAlias) return;
    if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
      // Such an instance is built per request or per consumer, so there is no single instance to call.
      const prototype: unknown = wrapper.isNotMetatype ? undefined : wrapper.metatype?.prototype;
      const method = prototype && this.handlerMethodNames(prototype as object)[0];
      if (method) throw new NotificationHandlerScopeError(`${wrapper.name.toString()}.${method}`);
      return;
    }
    const instance: unknown = wrapper.instance;
    if (!instance || typeof instance !== 'object' || seen.has(instance)) return;
    seen.add(instance);
    const prototype = Object.getPrototypeOf(instance) as object;
    for (const methodName of this.handlerMethodNames(prototype)) {
      const method = (instance as Record<string, HandlerMethod>)[methodName]!;
      const handler: NotificationHandler = {
        name: `${instance.constructor.name}.${methodName}`,
        invoke: method.bind(instance),
      };
      for (const eventType of eventTypesOf(method)) {
        yield [eventType, handler];
      }
    }
  }

  private handlerMethodNames(prototype: object): string[] {
    return this.scanner
      .getAllMethodNames(prototype)
      .filter((name) => eventTypesOf((prototype as Record<string, unknown>)[name]).length > 0);
  }

  private report(byEventType: ReadonlyMap<string, readonly NotificationHandler[]>, catchAll: readonly NotificationHandler[]): void {
    const names = (handlers: readonly NotificationHandler[]) => handlers.map((handler) => handler.name).join(', ');
    for (const [eventType, handlers] of byEventType) {
      this.logger.log(`${eventType} notifications go to ${names(handlers)}`);
    }
    if (catchAll.length > 0) {
      this.logger.log(`Notifications of any other type go to ${names(catchAll)}`);
    }
    for (const eventType of Object.values(PaymentMethodEventType)) {
      if (!byEventType.has(eventType) && catchAll.length === 0) {
        this.logger.warn(
          `No handler for ${eventType} notifications: they will be acknowledged and dropped. ` +
            `Decorate a provider method with @OnPaymentMethod…() to receive them.`,
        );
      }
    }
  }
}

function eventTypesOf(method: unknown): readonly string[] {
  if (typeof method !== 'function') return [];
  return (Reflect.getMetadata(NOTIFICATION_HANDLER_METADATA, method) as readonly string[] | undefined) ?? [];
}
