import { Matches } from '../../common/class-validator-files.js';
import { SNAKE_CASE } from './payout-field-patterns.js';

/** Lowercase words joined by single underscores, such as `mobile_money`. */
export function IsSnakeCase(): PropertyDecorator {
  return Matches(SNAKE_CASE, { message: '$property must be lowercase snake_case, such as "salary_payment"' });
}
