import { Inject, Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { NotificationHandlerScopeError } from '../../errors/notification-handler-scope.error.js';
import { PayoutsConfigError } from '../../errors/payouts-config.error.js';
import { PaymentMethodEventType } from '../../interfaces/payment-method-event-type.js';
import type { PayoutsRegistrations } from '../../interfaces/payouts-registrations.interface.js';
import { DEFAULT_PAYOUTS_ACCOUNT, PAYOUTS_ACCOUNT, PAYOUTS_REGISTRATIONS } from '../../payouts.constants.js';
import {
  ANY_NOTIFICATION_EVENT,
  NOTIFICATION_HANDLER_METADATA,
  type NotificationHandlerBinding,
} from './notification-handler.decorators.js';
import { type NotificationHandler, NotificationHandlerTable } from './notification-handler-table.js';
import { PackageLogger } from '../../common/package-logger.js';

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];
type HandlerMethod = NotificationHandler['invoke'];

/**
 * Finds the `@OnPaymentMethod…()` methods of every provider and controller of the app, in any module, that receive
 * this registration's account: those without `account`, and those naming it.
 */
@Injectable()
export class NotificationHandlersExplorer {
  private readonly logger = new PackageLogger('PayoutsNotifications');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(PAYOUTS_ACCOUNT) private readonly account: string,
    @Inject(PAYOUTS_REGISTRATIONS) private readonly registrations: PayoutsRegistrations,
  ) {}

  /**
   * Fails the bootstrap on a handler naming an account that no registration of the app receives notifications for.
   * `runsHandlers` is `false` on an instance that only stores notifications for workers elsewhere (web-only queue mode).
   */
  explore(runsHandlers: boolean): NotificationHandlerTable {
    const byEventType = new Map<string, NotificationHandler[]>();
    const seen = new Set<object>();
    const ids = new HandlerIds();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      for (const [eventType, handler] of this.handlersOf(wrapper, seen, ids)) {
        const handlers = byEventType.get(eventType) ?? [];
        // A method decorated twice for one event (once for its account, once for all) still runs once.
        if (!handlers.includes(handler)) byEventType.set(eventType, [...handlers, handler]);
      }
    }
    const catchAll = byEventType.get(ANY_NOTIFICATION_EVENT) ?? [];
    byEventType.delete(ANY_NOTIFICATION_EVENT);
    for (const [eventType, handlers] of byEventType) {
      byEventType.set(eventType, [...handlers, ...catchAll.filter((handler) => !handlers.includes(handler))]);
    }
    this.report(byEventType, catchAll, runsHandlers);
    return new NotificationHandlerTable(byEventType, catchAll);
  }

  private *handlersOf(
    wrapper: InstanceWrapper,
    seen: Set<object>,
    ids: HandlerIds,
  ): Generator<[string, NotificationHandler]> {
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
      const name = `${instance.constructor.name}.${methodName}`;
      const handler: NotificationHandler = { name, id: ids.next(name), invoke: method.bind(instance) };
      for (const { eventType, accounts } of bindingsOf(method)) {
        if (accounts !== undefined) this.checkAccounts(handler.name, accounts);
        if (accounts === undefined || accounts.includes(this.account)) yield [eventType, handler];
      }
    }
  }

  /** Every account a handler names must be a registration of the app that receives notifications. */
  private checkAccounts(handler: string, accounts: readonly unknown[]): void {
    if (accounts.length === 0) {
      throw new PayoutsConfigError('account', "one account name or more; omit it to receive every account's", handler);
    }
    for (const account of accounts) {
      const registration = typeof account === 'string' ? this.registrations.find(account) : undefined;
      if (!registration) {
        const registered = this.registrations.all.map((known) => `'${known.account}'`).join(', ');
        const named = typeof account === 'string' ? `'${account}'` : String(account);
        throw new PayoutsConfigError(
          'account',
          `the name of a PayoutsModule registration of the app (${registered}), but ${named} is none of them`,
          handler,
        );
      }
      if (registration.notificationsPath === undefined) {
        throw new PayoutsConfigError(
          'account',
          `an account that receives notifications, but ${registration.registeredWith} has notifications: false`,
          handler,
        );
      }
    }
  }

  private handlerMethodNames(prototype: object): string[] {
    return this.scanner
      .getAllMethodNames(prototype)
      .filter((name) => bindingsOf((prototype as Record<string, unknown>)[name]).length > 0);
  }

  private report(
    byEventType: ReadonlyMap<string, readonly NotificationHandler[]>,
    catchAll: readonly NotificationHandler[],
    runsHandlers: boolean,
  ): void {
    // With several registrations every line says whose handlers it lists; a lone unnamed one logs as it always did.
    const account =
      this.account === DEFAULT_PAYOUTS_ACCOUNT && this.registrations.all.length === 1
        ? ''
        : `Account '${this.account}': `;
    if (!runsHandlers) {
      // Nothing is dropped here: whatever this instance has or lacks, the workers' own handlers decide.
      this.logger.log(`${account}Notifications are stored for the queue's workers, which run the handlers`);
      return;
    }
    const names = (handlers: readonly NotificationHandler[]) => handlers.map((handler) => handler.name).join(', ');
    for (const [eventType, handlers] of byEventType) {
      this.logger.log(`${account}${eventType} notifications go to ${names(handlers)}`);
    }
    if (catchAll.length > 0) {
      this.logger.log(`${account}Notifications of any other type go to ${names(catchAll)}`);
    }
    for (const eventType of Object.values(PaymentMethodEventType)) {
      if (!byEventType.has(eventType) && catchAll.length === 0) {
        this.logger.warn(
          `${account}No handler for ${eventType} notifications: they will be acknowledged and dropped. ` +
            `Decorate a provider method with @OnPaymentMethod…() to receive them.`,
        );
      }
    }
  }
}

/**
 * Gives each handler a distinct id, stable from one deploy to the next: its name, and for the second and later
 * instances of one class (a class provided under several tokens), the name followed by ` #2`, ` #3`…, in the order
 * Nest lists the providers, which follows the modules' own order.
 */
class HandlerIds {
  readonly #counts = new Map<string, number>();

  next(name: string): string {
    const count = (this.#counts.get(name) ?? 0) + 1;
    this.#counts.set(name, count);
    return count === 1 ? name : `${name} #${count}`;
  }
}

function bindingsOf(method: unknown): readonly NotificationHandlerBinding[] {
  if (typeof method !== 'function') return [];
  const bindings: readonly NotificationHandlerBinding[] | undefined = Reflect.getMetadata(
    NOTIFICATION_HANDLER_METADATA,
    method,
  );
  return bindings ?? [];
}
