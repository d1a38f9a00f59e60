/**
 * The metadata key of `@RouteConfig()` from `@nestjs/platform-fastify`, which this package cannot import (an Express
 * app does not install it). The Fastify adapter gives what is stored under it to Fastify as the route's `config`,
 * which a request carries in `request.routeOptions.config`; a test holds this key to the decorator's.
 */
export const FASTIFY_ROUTE_CONFIG_METADATA = '__fastify_route_config__';

/** The property of that route config naming the registration whose route it is. */
const NOTIFICATIONS_ROUTE = Symbol('payouts:notifications-route');

/** Marks `routeMethod` as the notification route of the registration configured by `owner`. */
export function markNotificationsRoute(routeMethod: object, owner: object): void {
  Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { [NOTIFICATIONS_ROUTE]: owner }, routeMethod);
}

/** Whether a Fastify route config is that of the notification route of the registration configured by `owner`. */
export function isNotificationsRoute(routeConfig: unknown, owner: object): boolean {
  return (routeConfig as { [NOTIFICATIONS_ROUTE]?: unknown } | undefined)?.[NOTIFICATIONS_ROUTE] === owner;
}
