import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { PayoutsConfigError } from '../index.js';
import {
  PAYOUT_RUN_HANDLER_METADATA,
  type PayoutRunEvent,
  type PayoutRunHandlerBinding,
} from './payout-run-handler.decorators.js';

/** A discovered result handler: its name for logs, and the bound method. */
export interface PayoutRunHandler {
  readonly name: string;
  invoke(payload: unknown): unknown;
}

/** What each kind of handler receives, as the start-up lines name it. */
const RECEIVED: Record<PayoutRunEvent, string> = {
  sent: 'sent payouts go',
  refused: 'refused payouts go',
  unknown: 'payouts of unknown outcome go',
  'run-completed': 'completed runs go',
  progress: 'run progress goes',
};

/** The start-up line that says which methods receive `event`: "Account 'eu': completed runs go to Ledger.closed". */
export function handlersLine(account: string, event: PayoutRunEvent, handlers: readonly PayoutRunHandler[]): string {
  return `Account '${account}': ${RECEIVED[event]} to ${handlers.map((handler) => handler.name).join(', ')}`;
}

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/**
 * Finds the `@OnPayout…()` methods of every provider and controller of the app that receive this account's runs:
 * those without `account`, and those naming it. Like the notification handlers, they need a single instance.
 */
export function explorePayoutRunHandlers(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  account: string,
): ReadonlyMap<PayoutRunEvent, readonly PayoutRunHandler[]> {
  const byEvent = new Map<PayoutRunEvent, PayoutRunHandler[]>();
  const seen = new Set<object>();
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    for (const [event, handler] of handlersOf(wrapper, scanner, account, seen)) {
      const handlers = byEvent.get(event) ?? [];
      if (!handlers.some((known) => known.name === handler.name)) byEvent.set(event, [...handlers, handler]);
    }
  }
  return byEvent;
}

function* handlersOf(
  wrapper: InstanceWrapper,
  scanner: MetadataScanner,
  account: string,
  seen: Set<object>,
): Generator<[PayoutRunEvent, PayoutRunHandler]> {
  if (wrapper.isAlias) return;
  if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
    const prototype: unknown = wrapper.isNotMetatype ? undefined : wrapper.metatype?.prototype;
    const method = prototype && handlerMethodNames(scanner, prototype as object)[0];
    if (method) {
      throw new PayoutsConfigError(
        'scope',
        'a method of a default-scoped (singleton) provider: payout results are tied to no request of the app',
        `${wrapper.name.toString()}.${method}`,
      );
    }
    return;
  }
  const instance: unknown = wrapper.instance;
  if (!instance || typeof instance !== 'object' || seen.has(instance)) return;
  seen.add(instance);
  const prototype = Object.getPrototypeOf(instance) as object;
  for (const methodName of handlerMethodNames(scanner, prototype)) {
    const method = (instance as Record<string, (payload: unknown) => unknown>)[methodName]!;
    const handler: PayoutRunHandler = {
      name: `${instance.constructor.name}.${methodName}`,
      invoke: method.bind(instance),
    };
    for (const { event, accounts } of bindingsOf(method)) {
      if (accounts === undefined || accounts.includes(account)) yield [event, handler];
    }
  }
}

function handlerMethodNames(scanner: MetadataScanner, prototype: object): string[] {
  return scanner
    .getAllMethodNames(prototype)
    .filter((name) => bindingsOf((prototype as Record<string, unknown>)[name]).length > 0);
}

function bindingsOf(method: unknown): readonly PayoutRunHandlerBinding[] {
  if (typeof method !== 'function') return [];
  const bindings: readonly PayoutRunHandlerBinding[] | undefined = Reflect.getMetadata(
    PAYOUT_RUN_HANDLER_METADATA,
    method,
  );
  return bindings ?? [];
}
