import 'reflect-metadata';

export * from '../simulator/index.js';
export { FakePayoutsService } from './fake-payouts.service.js';
export { MockFault, type MockFaultKind, type MockHeaders, type RetryAfter } from './mock-payouts-api/mock-fault.js';
export type { MockFaultHandle, MockFaultRule, MockRequestMatcher } from './mock-payouts-api/mock-fault-rule.js';
export { MockPayoutsApi } from './mock-payouts-api/mock-payouts-api.js';
export type { MockPayoutsApiOptions } from './mock-payouts-api/mock-payouts-api-options.js';
export type { MockCredentialCheck, MockPayoutsCall, MockPayoutsRequest } from './mock-payouts-api/mock-payouts-call.js';
export type { MockPayout } from './mock-payouts-api/mock-payouts-endpoint.js';
export { notificationHandlerArgs } from './notification-handler-args.js';
export { VirtualClock } from './virtual-clock.js';
