import { RouteConfig } from '@nestjs/platform-fastify';
import { describe, expect, it } from 'vitest';
import {
  FASTIFY_ROUTE_CONFIG_METADATA,
  isNotificationsRoute,
  markNotificationsRoute,
} from '../../lib/notifications/http/notifications-route-metadata.js';

/*
 * On Fastify the receiver recognises its route's requests by the route config Nest's Fastify adapter builds from
 * `@RouteConfig()` metadata; the package cannot import that decorator, so its key is restated and held to it here.
 */
describe('the notification route mark', () => {
  it("is stored under @RouteConfig()'s metadata key", () => {
    class Controller {
      receive(): void {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Controller.prototype, 'receive')!;
    RouteConfig({ rateLimit: 10 })(Controller.prototype, 'receive', descriptor);
    expect(Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, Controller.prototype.receive)).toEqual({ rateLimit: 10 });
  });

  it('names one registration: another registration, or any other route, is not it', () => {
    const owner = {};
    const route = () => undefined;
    markNotificationsRoute(route, owner);
    const config = { ...Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, route), url: '/x', method: 'POST' };
    expect(isNotificationsRoute(config, owner)).toBe(true);
    expect(isNotificationsRoute(config, {})).toBe(false);
    expect(isNotificationsRoute({ url: '/x', method: 'POST' }, owner)).toBe(false);
    expect(isNotificationsRoute(undefined, owner)).toBe(false);
  });
});
