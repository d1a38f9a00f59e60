import type { NotificationRequestInfo } from '../../interfaces/notifications-options.interface.js';

/** The part of an Express or Fastify request the notification route reads; both frameworks provide it. */
export interface NotificationHttpRequest extends NotificationRequestInfo {
  /** Parsed by the framework's JSON body parser. */
  readonly body: unknown;
}
