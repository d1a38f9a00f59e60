import { Controller, Inject, Post, Req, Res, type Type, VERSION_NEUTRAL } from '@nestjs/common';
import type { NotificationHttpRequest } from './notification-http-request.interface.js';
import { NotificationReceiver } from './notification-receiver.js';
import type { NotificationsConfig } from '../notifications-config.js';
import { markNotificationsRoute } from './notifications-route-metadata.js';

const ROUTE_METHOD = 'receive';

/**
 * A new class per module registration, so that each app (or each registration) binds its own path.
 * Its route method exists but is only made a route by `bindNotificationsRoute`.
 */
export function createNotificationsController(): Type<unknown> {
  class PayoutsNotificationsController {
    constructor(@Inject(NotificationReceiver) private readonly receiver: NotificationReceiver) {}

    // `@Res()` leaves the response to the receiver, which writes the exact bytes; no pipe touches the body.
    receive(@Req() request: NotificationHttpRequest, @Res() response: unknown): void | Promise<void> {
      return this.receiver.receive(request, response);
    }
  }
  return PayoutsNotificationsController;
}

/** Called once the options are resolved. With notifications off, or no route, the class gets no route at all. */
export function bindNotificationsRoute(controller: Type<unknown>, config: NotificationsConfig | false): void {
  if (!config || !config.route) {
    // No path at all: Nest then maps and logs nothing for the class (`Controller()` would log it at `/`).
    Controller([])(controller);
    return;
  }
  // Version-neutral, so that an app enabling versioning keeps the URL configured in the service's portal.
  Controller({ path: config.path, version: VERSION_NEUTRAL })(controller);
  for (const decorate of config.controllerDecorators) {
    decorate(controller);
  }
  const prototype = controller.prototype as object;
  const descriptor = Object.getOwnPropertyDescriptor(prototype, ROUTE_METHOD)!;
  // On Fastify, the receiver recognises its own route's requests by this mark, before their body is parsed.
  markNotificationsRoute(descriptor.value as object, config);
  Post()(prototype, ROUTE_METHOD, descriptor);
}
