import 'reflect-metadata';

export * from '../simulator/index.js';
export { FakePayoutsService } from './fake-payouts.service.js';
export { notificationHandlerArgs } from './notification-handler-args.js';
export { VirtualClock } from './virtual-clock.js';
