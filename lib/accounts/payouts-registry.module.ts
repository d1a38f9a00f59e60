import { Module } from '@nestjs/common';
import { PAYOUTS_REGISTRATIONS } from '../payouts.constants.js';
import { PayoutsRegistry } from './payouts-registry.js';

/**
 * Imported by every `PayoutsModule` registration. A static module has one instance per application, so its registry
 * is shared by the registrations of one app, and two apps in one process each have their own.
 */
@Module({
  providers: [{ provide: PAYOUTS_REGISTRATIONS, useClass: PayoutsRegistry }],
  exports: [PAYOUTS_REGISTRATIONS],
})
export class PayoutsRegistryModule {}
