import { IsDefined } from '../../common/class-validator-files.js';

/** Every field of a payout request is required; checked first so a missing field gets one clear message. */
export function IsRequired(): PropertyDecorator {
  return IsDefined({ message: '$property is required' });
}
