import { Inject } from '@nestjs/common';
import { getPayoutsServiceToken } from './payouts-service.token.js';

/**
 * Injects the `PayoutsService` of the registration named `account`:
 * `constructor(@InjectPayouts('eu') private readonly eu: PayoutsService) {}`. Without a name it injects the unnamed
 * registration's, as a plain `PayoutsService` parameter does.
 */
export function InjectPayouts(account?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getPayoutsServiceToken(account));
}
