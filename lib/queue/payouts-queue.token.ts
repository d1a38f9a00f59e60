import { Inject } from '@nestjs/common';
import { getNotificationsQueueToken } from '../accounts/notifications-queue.token.js';

/**
 * The injection token of the BullMQ `Queue` of the registration named `account` (the unnamed one without a name), in
 * queue mode: for Bull Board, metrics, or the dead-letter functions. Every registration exports it; without queue
 * mode it injects `null`.
 */
export function getPayoutsQueueToken(account?: string): string {
  return getNotificationsQueueToken(account);
}

/** Injects the `Queue` of a registration: `constructor(@InjectPayoutsQueue() private readonly queue: Queue) {}`. */
export function InjectPayoutsQueue(account?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getPayoutsQueueToken(account));
}
